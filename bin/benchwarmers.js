#!/usr/bin/env node
// The npm shim: find Python 3.11+ and run the bundled Python source (`python -m benchwarmers`) with the same args.
"use strict";

const { spawn, spawnSync } = require("child_process");
const os = require("os");
const path = require("path");

const ROOT = path.resolve(__dirname, "..");   // holds benchwarmers/, examples/, serve.py
const IS_WINDOWS = process.platform === "win32";
const CHECK = "import sys; print(sys.version_info[:2] >= (3,11), '%d.%d' % sys.version_info[:2])";

function candidates() {
  const list = [];
  if (process.env.BENCHWARMERS_PYTHON) {
    list.push({ cmd: process.env.BENCHWARMERS_PYTHON, args: [], label: "BENCHWARMERS_PYTHON" });
  }
  list.push({ cmd: "python3", args: [], label: "python3" });
  list.push({ cmd: "python", args: [], label: "python" });
  if (IS_WINDOWS) {
    list.push({ cmd: "py", args: ["-3"], label: "py -3" });
  }
  return list;
}

// Returns the first interpreter that reports 3.11+, and notes on the ones passed over.
function findPython() {
  const notes = [];
  for (const c of candidates()) {
    const r = spawnSync(c.cmd, [...c.args, "-c", CHECK], { encoding: "utf8", windowsHide: true, timeout: 20000 });
    if (r.error || r.status !== 0) {
      notes.push(`${c.label}: not found`);
      continue;
    }
    const [ok, version] = (r.stdout || "").trim().split(/\s+/);
    if (ok === "True") {
      return { python: c, notes };
    }
    notes.push(`${c.label}: Python ${version || "of unknown version"} is too old`);
  }
  return { python: null, notes };
}

function explainMissing(notes) {
  const lines = [
    "Benchwarmers needs Python 3.11 or newer, and none was found.",
    `Looked for: ${notes.join("; ")}.`,
    "",
    "Install Python, then run this command again:",
    "  any system:     https://www.python.org/downloads/",
    "  macOS:          brew install python@3.12",
    "  Debian/Ubuntu:  sudo apt install python3",
    "  Windows:        winget install Python.Python.3.12",
    "",
    "Or set BENCHWARMERS_PYTHON to the path of a Python 3.11+ interpreter.",
  ];
  process.stderr.write(lines.join("\n") + "\n");
}

function run() {
  const { python, notes } = findPython();
  if (!python) {
    explainMissing(notes);
    process.exit(1);
  }
  if (process.env.BENCHWARMERS_PYTHON && python.label !== "BENCHWARMERS_PYTHON") {
    process.stderr.write(`Note: BENCHWARMERS_PYTHON is not a Python 3.11+ interpreter; using ${python.label}.\n`);
  }
  const env = { ...process.env };
  // The bundled source wins over any other installed copy.
  env.PYTHONPATH = env.PYTHONPATH ? ROOT + path.delimiter + env.PYTHONPATH : ROOT;
  const child = spawn(python.cmd, [...python.args, "-m", "benchwarmers", ...process.argv.slice(2)],
    { stdio: "inherit", env, windowsHide: false });
  forwardSignals(child);
  child.on("error", (err) => {
    process.stderr.write(`Could not start ${python.label}: ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    if (code !== null) {
      process.exit(code);
    }
    // The child died of a signal: die of the same one, so our caller sees what happened.
    process.removeAllListeners(signal);
    try {
      process.kill(process.pid, signal);
    } catch (e) {
      // fall through to an exit code
    }
    process.exit(128 + (os.constants.signals[signal] || 1));
  });
}

// Node must not die first and leave the child running: catch the signals and pass them on.
function forwardSignals(child) {
  const pass = (sig) => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill(sig);
      } catch (e) {
        // the child is already gone
      }
    }
  };
  // A terminal's Ctrl-C reaches the whole process group (and every console process on Windows), so the
  // child has it already; pass SIGINT on only if the child is still running a moment later.
  process.on("SIGINT", () => {
    if (!IS_WINDOWS) {
      setTimeout(() => pass("SIGINT"), 500).unref();
    }
  });
  for (const sig of ["SIGTERM", "SIGHUP", "SIGBREAK"]) {
    try {
      process.on(sig, () => pass(IS_WINDOWS ? "SIGTERM" : sig));
    } catch (e) {
      // a signal this platform does not have
    }
  }
}

run();
