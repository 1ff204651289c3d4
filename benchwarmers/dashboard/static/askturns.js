// The Ask page as a conversation: once the answers are in, a follow-up box asks the same seats again, each column
// going on with its own thread (the chat body's bench.continue: the service rebuilds each seat's thread from the
// record), or one seat only ("Continue with this seat only": bench.seat). The turn on show moves up into the earlier
// turns, its columns, verdict forms and points kept as they were; a new ask from the form above starts a new
// conversation. ask.js runs each turn (BW.turns.start before it, BW.turns.offer once it is done).
"use strict";
(function () {
  // The follow-up box, made from its template under the answers the first time it is offered.
  function follow() {
    let form = document.getElementById("follow-form");
    if (!form) {
      form = document.getElementById("follow-template").content.firstElementChild.cloneNode(true);
      form.hidden = true;
      document.getElementById("answers").after(form);
      form.querySelector("[data-every]").addEventListener("click", every);
    }
    return form;
  }

  // Before a turn: a follow-up shelves the turn on show; an ask from the form above clears the conversation.
  function start(form, now) {
    const turns = document.getElementById("turns"), box = document.getElementById("follow-form");
    if (box) box.hidden = true;
    if (form !== box) {
      turns.replaceChildren();
      return;
    }
    const area = document.getElementById("answers");
    const seats = area.querySelector(".seats");
    if (!now.panel || !seats.children.length) return;
    const turn = document.createElement("article");
    turn.className = "turn";
    turn.dataset.panel = now.panel;
    const head = document.createElement("h3");
    head.textContent = "You asked: " + clip(now.prompt || "");
    const link = document.createElement("a");
    link.href = "/calls/" + encodeURIComponent(now.panel);
    link.textContent = "Open this turn on its own page";
    turn.append(head, link);
    const points = document.getElementById("points");
    if (points) {                   // ids stay unique: the points on show are always the newest turn's
      points.id = "points-" + now.panel;
      turn.append(points);
    }
    const merged = area.querySelector(".merged");
    if (!merged.hidden) turn.append(merged.cloneNode(true));
    const grid = document.createElement("div");
    grid.className = "turn-seats";
    for (const button of seats.querySelectorAll("[data-stop], [data-retry], [data-only]")) button.remove();
    grid.append(...seats.children);
    turn.append(grid);
    turns.append(turn);
  }

  function clip(text) {
    return text.length > 200 ? text.slice(0, 199) + "…" : text;
  }

  // Once a turn is done: the follow-up box, aimed at that turn's panel and its target, every seat asked.
  function offer(now) {
    const form = follow();
    if (!now.panel || !now.target) return;
    form.elements.continue.value = now.panel;
    const direct = now.target.mode === "direct";
    form.elements.collection.value = direct ? "" : now.target.collection;
    form.elements.with.value = direct ? now.target.collection : "";
    form.elements.with.disabled = !direct;
    form.elements.merged.disabled = now.target.mode !== "merged";
    every();
    form.elements.prompt.value = "";
    form.hidden = false;
  }

  function every() {
    const form = follow();
    form.elements.seat.value = "";
    form.querySelector("[data-only-note]").hidden = true;
    form.querySelector("button[type=submit]").textContent = "Ask the same seats";
  }

  // "Continue with this seat only": the follow-up goes to that column's seat alone (route mode's pinning).
  function only(el) {
    const form = follow();
    form.elements.seat.value = el.dataset.seat;
    const note = form.querySelector("[data-only-note]");
    note.querySelector("span").textContent = "Only seat " + el.dataset.seat + " (" +
      el.querySelector("h3").textContent + ") goes on.";
    note.hidden = false;
    form.querySelector("button[type=submit]").textContent = "Ask seat " + el.dataset.seat + " only";
    form.elements.prompt.focus();
  }

  document.addEventListener("DOMContentLoaded", () => {
    if (!document.getElementById("follow-template") || !window.fetch || !window.ReadableStream) return;
    document.getElementById("answers").addEventListener("click", (event) => {
      const button = event.target.closest("button[data-only]");
      if (button) only(button.closest(".seat"));
    });
  });

  window.BW.turns = { start, offer };
})();
