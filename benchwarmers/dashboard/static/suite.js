// The Suite pages: follow the queued and running runs by polling the page's own JSON (data-follow) and update each
// one's status and progress in place; once one of them stops moving (done, failed, owed again ...), reload so its
// scores and answers show. A running fetch of real bugs (data-follow-fetch) is followed the same way. Text is set
// with textContent or built as DOM nodes; never with innerHTML.
"use strict";
(function () {
  function progress(run) {
    if (!run.total) {
      const span = document.createElement("span");
      span.className = "muted";
      span.textContent = "not started";
      return [span];
    }
    const bar = document.createElement("progress");
    bar.max = run.total;
    bar.value = run.done;
    const text = document.createElement("span");
    text.className = "progress-text";
    text.textContent = run.done + " of " + run.total + (run.failed ? ", " + run.failed + " failed" : "");
    return [bar, " ", text];
  }

  function show(row, run) {
    const status = row.querySelector('[data-cell="status"]');
    if (status) status.replaceChildren(BW.chip(run.status, run.status));
    const cell = row.querySelector('[data-cell="progress"]');
    if (cell) cell.replaceChildren(...progress(run));
  }

  const MOVING = new Set(["queued", "running"]);

  function follow(source) {
    const url = source.dataset.follow;
    const rows = [...document.querySelectorAll("[data-run]")].filter((row) => MOVING.has(row.dataset.status));
    async function poll() {
      try {
        const response = await fetch(url, { headers: { "Accept": "application/json" }, credentials: "same-origin" });
        if (!response.ok) throw new Error(String(response.status));
        const data = await response.json();
        const open = new Map((data.open || []).map((run) => [String(run.id), run]));
        for (const row of rows) {
          const run = open.get(row.dataset.run);
          if (!run || !MOVING.has(run.status)) {   // it stopped: the page as it is now has its outcome
            window.location.reload();
            return;
          }
          show(row, run);
        }
      } catch (err) { /* try again on the next tick */ }
      setTimeout(poll, 1000);
    }
    if (rows.length) setTimeout(poll, 1000);
  }

  function followFetch(line) {
    const bar = line.querySelector("progress");
    const text = line.querySelector(".progress-text");
    const counts = line.querySelector("[data-counts]");
    async function poll() {
      try {
        const response = await fetch(line.dataset.followFetch,
                                     { headers: { "Accept": "application/json" }, credentials: "same-origin" });
        if (!response.ok) throw new Error(String(response.status));
        const job = ((await response.json()).real || {}).job;
        if (!job || String(job.id) !== line.dataset.fetchJob || job.status !== "running") {
          window.location.reload();            // it ended: the page as it is now lists what it wrote and skipped
          return;
        }
        bar.value = job.done;
        text.textContent = job.done + " of " + job.total + " picks";
        counts.textContent = ": " + job.written + " written, " + job.present + " already there, " + job.skipped +
          " skipped";
      } catch (err) { /* try again on the next tick */ }
      setTimeout(poll, 1000);
    }
    setTimeout(poll, 1000);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const source = document.querySelector("[data-follow]");
    if (source && window.BW) follow(source);
    const fetching = document.querySelector("[data-follow-fetch]");
    if (fetching) followFetch(fetching);
  });
})();
