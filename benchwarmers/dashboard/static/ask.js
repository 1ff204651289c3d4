// The Ask page: send the form to /ask/stream and fill one column per seat as its model writes (plain text, token by
// token, with its timer and count), then with its answer built from Markdown once the seat is done. Each column can
// stop its seat while it is out, ask it again (the retry's call takes the seat's place) and copy its answer. A seat
// still running when the panel answered (past the explore grace) is read again from the ask's page until its late
// answer is in. Answers arrive as Markdown nodes and are built as elements
// (BW.build); nothing goes through innerHTML. When the panel shows points, points.js puts them above the columns,
// once the referee (which reads the answers after the reply) is done.
"use strict";
(function () {
  const WORDS = { ok: "answered", failed: "failed", timeout: "timed out", skipped: "skipped",
    running: "still running", cancelled: "cancelled", stopped: "stopped" };
  // The ask on show: its panel, its columns and seats by call id (a retry's call replaces its seat's).
  const now = { panel: null, columns: {}, seatsOf: {}, blind: false };

  function tick() {
    for (const el of document.querySelectorAll("#answers .seat.is-waiting, #answers .seat.is-running")) {
      const out = el.querySelector(".elapsed");
      if (out) out.textContent = Math.round((performance.now() - Number(el.dataset.started)) / 1000) + " s";
    }
  }

  function column(template, seat, panel) {
    const el = template.content.firstElementChild.cloneNode(true);
    el.dataset.call = seat.call;
    el.dataset.seat = seat.seat;
    el.dataset.started = performance.now();
    el.classList.add("is-waiting");
    el.querySelector(".seat-source").id = "src-" + seat.call;
    el.querySelector("[data-copy]").dataset.copy = "#src-" + seat.call;
    tools(el, "out");
    el.querySelector("h3").textContent = seat.model;
    meta(el, seat, null);
    const best = el.querySelector(".best-pick form");   // a plain post: the ask's page then shows who sat where
    best.querySelector('input[name="panel"]').value = panel;
    best.querySelector('input[name="seat"]').value = seat.seat;
    best.querySelector('input[name="back"]').value = "/calls/" + encodeURIComponent(panel);
    const form = el.querySelector("form.verdict");
    form.querySelector('input[name="call"]').value = seat.call;
    form.querySelector('input[name="back"]').value = "/ask";
    for (const field of form.querySelectorAll("[id]")) {     // ids and labels unique per column
      const old = field.id;
      field.id = old.replace("CALL", seat.call);
      const label = form.querySelector('label[for="' + old + '"]');
      if (label) label.htmlFor = field.id;
    }
    form.hidden = true;
    return el;
  }

  function meta(el, seat, done) {
    const p = el.querySelector(".seat-meta");
    const elapsed = document.createElement("span");
    elapsed.className = "elapsed";
    const tokens = document.createElement("span");
    tokens.className = "tokens";
    const count = Number(done ? done.tokens : el.dataset.pieces);
    if (count) tokens.textContent = counted(count);
    const cut = done && done.status === "ok" && done.finish_reason === "length";
    p.replaceChildren("seat " + seat.seat + " · " + seat.kind + " · ",
      done ? BW.chip(cut ? "cut" : done.status, cut ? done.outcome : (WORDS[done.status] || done.status))
        : BW.chip("probing", el.dataset.pieces ? "writing" : "thinking"), " · ",
      done && done.status !== "running" ? done.seconds.toFixed(done.seconds < 1 ? 2 : 1) + " s" : elapsed, tokens);
    tick();
  }

  // A piece of a seat's answer as its model writes it: appended as plain text (Markdown comes with the seat's end).
  function heard(el, seat, live) {
    let text = el.querySelector(".live-text");
    if (!text) {
      text = document.createElement("div");
      text.className = "live-text";
      el.querySelector(".answer").replaceChildren(text);
      el.classList.add("is-writing");
    }
    text.append(live.text);
    const first = !el.dataset.pieces;
    el.dataset.pieces = live.pieces;
    if (first) meta(el, seat, null);
    else el.querySelector(".tokens").textContent = counted(live.pieces);
  }

  function counted(n) {
    return " · " + n + (n === 1 ? " token" : " tokens");
  }

  // Which of a column's controls show: Stop while its seat is out, Retry once it is done, Copy when it has text,
  // Continue with this seat only once it has answered.
  function tools(el, state) {
    el.querySelector("[data-stop]").hidden = state === "done";
    el.querySelector("[data-retry]").hidden = state !== "done";
    el.querySelector("[data-copy]").hidden = !el.querySelector(".seat-source").textContent;
    el.querySelector("[data-only]").hidden = state !== "done" || !el.querySelector(".seat-source").textContent;
  }

  function fill(el, seat) {
    el.classList.remove("is-waiting", "is-writing");
    el.classList.toggle("is-running", seat.status === "running");
    meta(el, seat, seat);
    el.querySelector(".seat-source").textContent = seat.answer || "";
    tools(el, seat.status === "running" ? "out" : "done");
    const answer = el.querySelector(".answer");
    const written = answer.querySelector(".live-text");
    answer.replaceChildren();
    if (seat.status === "stopped" && written) {   // what it wrote before it was stopped stays in view
      const p = document.createElement("p");
      p.className = "muted";
      p.textContent = "Stopped: " + (seat.error || "stopped") + ".";
      answer.replaceChildren(written, p);
    } else if (seat.status === "ok") {
      BW.build(seat.nodes, answer);
      answer.dataset.fold = "1";
      BW.fold(el);
      el.querySelector("form.verdict").hidden = false;
      el.querySelector(".best-pick").hidden = false;
    } else if (seat.status === "running") {
      const p = document.createElement("p");
      p.className = "muted";
      p.textContent = "Still running: the panel answered without it. Its answer shows here when it comes.";
      answer.replaceChildren(p);
    } else {
      const p = document.createElement("p");
      p.className = "seat-error";
      p.textContent = seat.error || seat.status;
      answer.replaceChildren(p);
    }
  }

  // The ask's page as data (its .json twin), or null when it could not be read.
  async function askPage(panel) {
    try {
      const response = await fetch("/calls/" + encodeURIComponent(panel) + ".json",
        { headers: { "Accept": "application/json" }, credentials: "same-origin" });
      return await response.json();
    } catch (err) { return null; }
  }

  // Seats still running when the panel answered: read the ask's page until each one's record says how it ended.
  async function follow(panel, columns) {
    for (let round = 0; round < 600; round += 1) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const waiting = Object.values(columns).filter((el) => el.classList.contains("is-running"));
      if (!waiting.length) return;
      const data = await askPage(panel);
      if (!data) continue;
      for (const seat of data.seats || []) {
        const el = columns[seat.call];
        if (!el || !el.classList.contains("is-running") || seat.status === "running") continue;
        late(el, seat);
      }
    }
  }

  function late(el, seat) {
    el.classList.remove("is-running");
    el.querySelector(".seat-source").textContent = seat.answer || "";
    tools(el, "done");
    const cut = seat.status === "ok" && seat.finish_reason === "length";
    const words = cut ? "cut at " + (seat.max_tokens || "its") + " tokens" : (WORDS[seat.status] || seat.status);
    el.querySelector(".seat-meta").replaceChildren("seat " + seat.seat + " · " + seat.kind + " · ",
      BW.chip(cut ? "cut" : seat.status, words), " · " + (seat.seconds || 0).toFixed(1) + " s · answered after the " +
      "panel replied");
    const answer = el.querySelector(".answer");
    if (seat.status === "ok") {
      const text = document.createElement("div");
      text.className = "late-text";
      text.textContent = seat.answer || "";
      answer.replaceChildren(text);
      answer.dataset.fold = "1";
      BW.fold(el);
      el.querySelector("form.verdict").hidden = false;
    } else {
      const p = document.createElement("p");
      p.className = "seat-error";
      p.textContent = seat.error || seat.status;
      answer.replaceChildren(p);
    }
  }

  // POST for a stream of JSON lines: the response once it is open, or an Error saying why the service refused.
  async function opened(url, body) {
    const response = await fetch(url, {
      method: "POST", body, credentials: "same-origin",
      headers: { "Accept": "application/x-ndjson", "X-CSRF-Token": BW.csrf() },
    });
    if (!response.ok) {
      let message = "The service answered " + response.status + ".";
      try { message = (await response.json()).error.message; } catch (e) { /* keep the status */ }
      throw new Error(message);
    }
    return response;
  }

  async function* lines(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      buffer += decoder.decode(value || new Uint8Array(), { stream: !done });
      let cut;
      while ((cut = buffer.indexOf("\n")) >= 0) {
        const text = buffer.slice(0, cut).trim();
        buffer = buffer.slice(cut + 1);
        if (text) yield JSON.parse(text);
      }
      if (done) return;
    }
  }

  // One turn: the ask form's (a new conversation) or the follow-up box's (askturns.js: the turn on show moves up).
  async function ask(form, event) {
    event.preventDefault();
    BW.turns.start(form, now);
    now.prompt = form.elements.prompt.value;
    const area = document.getElementById("answers");
    const seats = area.querySelector(".seats");
    const merged = area.querySelector(".merged");
    const link = area.querySelector(".panel-link");
    const template = document.getElementById("seat-template");
    const button = form.querySelector("button[type=submit]");
    seats.replaceChildren();
    const oldBox = area.querySelector("[data-save-all-box]");
    if (oldBox) oldBox.remove();
    const oldPoints = document.getElementById("points");
    if (oldPoints) oldPoints.remove();
    merged.replaceChildren();
    merged.hidden = true;
    link.hidden = true;
    BW.say(form, "Asking…");
    button.disabled = true;
    const columns = {}, seatsOf = {};
    Object.assign(now, { panel: null, target: null, columns, seatsOf, blind: false });
    let mergedText = "", panel = null, withPoints = false;
    const timer = setInterval(tick, 1000);
    try {
      const response = await opened(form.dataset.stream, new FormData(form));
      area.hidden = false;
      area.scrollIntoView({ block: "start", behavior: "smooth" });   // the answers in view, not the form
      for await (const msg of lines(response)) {
        if (msg.panel) {
          panel = now.panel = msg.panel;
          now.blind = !!msg.blind;
          now.target = { collection: msg.collection, mode: msg.mode };
          link.href = "/calls/" + encodeURIComponent(msg.panel);
          for (const seat of msg.seats) {
            seatsOf[seat.call] = seat;
            columns[seat.call] = column(template, seat, msg.panel);
            seats.appendChild(columns[seat.call]);
          }
          BW.fetchForms(seats);
          BW.say(form, "Waiting for " + msg.seats.length + " seats…");
        } else if (msg.live || msg.seat) {
          seatLine(msg);
          const left = seats.querySelectorAll(".is-waiting").length;
          BW.say(form, left ? "Waiting for " + left + " more…" : "Every seat is in.");
        } else if (msg.merge) {
          mergedText += msg.merge.delta;
          merged.hidden = false;
          merged.replaceChildren(heading("Merged answer"), para(mergedText));
        } else if (msg.merged) {
          const box = document.createElement("div");
          box.className = "answer";
          BW.build(msg.merged.nodes, box);
          merged.replaceChildren(heading("Merged by " + (msg.merged.model || "no model")), box);
        } else if (msg.points) {
          withPoints = true;                // shown once done: the card and marks come from the ask's page
        } else if (msg.error) {
          throw new Error(msg.error);
        } else if (msg.done && msg.done.record) {   // answered, but the record could not keep it
          BW.say(form, msg.done.answered + " of " + msg.done.seats + " seats answered. Not recorded: " +
            msg.done.record.why + "; nothing here can be judged.");
          seats.querySelectorAll("form.verdict").forEach((f) => { f.hidden = true; });
        } else if (msg.done) {
          BW.say(form, msg.done.answered + " of " + msg.done.seats + " seats answered. Judge them below.");
          link.hidden = false;
          if (msg.done.seats > 1) saveAllBox(area, seats);
          BW.turns.offer(now);
          if (withPoints && panel) {
            await BW.points.lift(panel, false);
            if (BW.points.pending()) BW.points.follow(panel);   // they appear when the referee is done
          }
        }
      }
      if (panel && seats.querySelector(".is-running")) follow(panel, columns);
    } catch (err) {
      BW.say(form, err.message, true);
    } finally {
      button.disabled = false;
      if (!seats.querySelector(".is-running")) clearInterval(timer);
      else setTimeout(() => clearInterval(timer), 20 * 60 * 1000);
    }
  }

  // A seat's line, in the ask's stream or a retry's: new text as its model writes, or the seat done.
  function seatLine(msg) {
    if (msg.live) {
      const el = now.columns[msg.live.call];
      if (el && el.classList.contains("is-waiting")) heard(el, now.seatsOf[msg.live.call], msg.live);
    } else {
      const el = now.columns[msg.seat.call];
      if (el) fill(el, msg.seat);
    }
  }

  function note(el, text, bad) {
    const out = el.querySelector("[data-seat-status]");
    out.textContent = text;
    out.classList.toggle("bad", !!bad);
  }

  function seatForm(el) {
    return new URLSearchParams({ panel: now.panel, seat: el.dataset.seat });
  }

  // Stop: its call is hung up; its line in the ask's stream (or the ask's page, for a late seat) then says so.
  async function stop(el) {
    note(el, "Stopping…");
    try {
      await BW.send("/ask/stop", seatForm(el));
      note(el, "");
    } catch (err) { note(el, err.message, true); }
  }

  // Retry: a new call of the same model with the same ask, read as it writes, in a fresh column in its place.
  async function retry(el) {
    note(el, "Asking again…");
    const timer = setInterval(tick, 1000);
    try {
      const response = await opened("/ask/retry", seatForm(el));
      for await (const msg of lines(response)) {
        if (msg.retry) {
          const seat = msg.retry.seat, fresh = column(document.getElementById("seat-template"), seat, msg.retry.panel);
          delete now.columns[el.dataset.call];
          now.columns[seat.call] = fresh;
          now.seatsOf[seat.call] = seat;
          el.replaceWith(fresh);
          BW.fetchForms(fresh);
          el = fresh;
        } else if (msg.live || msg.seat) {
          seatLine(msg);
        } else if (msg.done) {
          // the referee read the answer this one replaced: say so where the new answer shows
          note(el, msg.done.record ? "Not recorded: " + msg.done.record.why : "Asked again: this answer takes the " +
            "seat's place. The panel's points (and a merged answer) are not made again: they still read the answer " +
            "it replaced.");
        }
      }
    } catch (err) {
      note(el, err.message, true);
    } finally {
      clearInterval(timer);
    }
  }

  // A blind panel's columns say "Seat N" until it is judged: once a verdict or a point's verdict is saved in place,
  // the ask's page (its .json twin) is read, and when it says who sat where the headings name the models.
  async function named() {
    const panel = now.panel;
    if (!now.blind || !panel) return;
    const data = await askPage(panel);
    if (!data || !data.revealed || panel !== now.panel) return;
    now.blind = false;
    const models = {};
    for (const seat of data.seats || []) models[seat.seat] = seat.model;
    for (const el of Object.values(now.columns)) {
      if (models[el.dataset.seat]) el.querySelector("h3").textContent = models[el.dataset.seat];
    }
  }

  // One "Save all verdicts" above the columns once they are in (the call page has the same).
  function saveAllBox(area, seats) {
    const old = area.querySelector("[data-save-all-box]");
    if (old) old.remove();
    const box = document.createElement("div");
    box.className = "save-all";
    box.dataset.saveAllBox = "1";
    const button = document.createElement("button");
    button.type = "button";
    button.dataset.saveAll = "1";
    button.textContent = "Save all verdicts";
    const status = document.createElement("span");
    status.className = "status-text";
    status.dataset.status = "1";
    box.append(button, status);
    seats.before(box);
    BW.saveAll(box);
  }

  function heading(text) {
    const h = document.createElement("h3");
    h.textContent = text;
    return h;
  }

  function para(text) {
    const p = document.createElement("p");
    p.textContent = text;
    return p;
  }

  // What the ask would cost at most, before it is sent: asked again (POST /ask/estimate) as the form changes.
  function dollars(usd) {
    return "$" + (usd >= 0.01 || usd === 0 ? usd.toFixed(2) : usd.toFixed(4));
  }

  function costLine(x) {
    const what = x.kind === "referee" ? "referee " : x.kind === "merge" ? "merge " : "";
    return what + x.model + " " + (x.skip ? "skipped (" + x.skip + ")" : x.usd === null ? "no price known"
      : dollars(x.usd));
  }

  async function estimate(form) {
    const out = form.querySelector("[data-estimate-out]");
    if (!out || !form.querySelector("#ask-prompt").value.trim()) {
      if (out) out.hidden = true;
      return;
    }
    try {
      const response = await fetch(form.dataset.estimate, {
        method: "POST", body: new FormData(form), credentials: "same-origin",
        headers: { "Accept": "application/json", "X-CSRF-Token": form.querySelector('[name="csrf"]').value },
      });
      const d = await response.json();
      if (!response.ok) throw new Error(d.error ? d.error.message : "The service answered " + response.status);
      const calls = d.seats.concat([d.referee, d.merge].filter((x) => x));
      out.textContent = "At most " + dollars(d.most) + " for this ask: " + calls.map(costLine).join("; ") + ".";
    } catch (err) {
      out.textContent = "What this ask would cost is not known: " + err.message;
    }
    out.hidden = false;
  }

  document.addEventListener("DOMContentLoaded", () => {
    const form = document.getElementById("ask-form");
    if (form && window.fetch && form.dataset.estimate) {
      let pending = null;
      const later = () => { clearTimeout(pending); pending = setTimeout(() => estimate(form), 400); };
      form.addEventListener("input", later);
      form.addEventListener("change", later);
      later();
    }
    if (!form || !window.fetch || !window.ReadableStream) return;
    form.addEventListener("submit", (e) => ask(form, e));
    document.addEventListener("bw:sent", named);
    document.addEventListener("submit", (e) => {   // the follow-up box, made once the first answers are in
      if (e.target.id === "follow-form") ask(e.target, e);
    });
    document.getElementById("answers").addEventListener("click", (event) => {
      const button = event.target.closest("button[data-stop], button[data-retry]");
      if (!button) return;
      const el = button.closest(".seat");
      if ("stop" in button.dataset) stop(el);
      else retry(el);
    });
  });
})();
