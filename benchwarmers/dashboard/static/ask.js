// The Ask page: send the form to /ask/stream and fill one column per seat as each seat finishes.
// Answers arrive as Markdown nodes and are built as elements (BW.build); nothing goes through innerHTML.
"use strict";
(function () {
  const WORDS = { ok: "answered", failed: "failed", timeout: "timed out", skipped: "skipped" };

  function column(template, seat) {
    const el = template.content.firstElementChild.cloneNode(true);
    el.dataset.call = seat.call;
    el.classList.add("is-waiting");
    el.querySelector("h3").textContent = seat.model;
    meta(el, seat, null);
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
    p.replaceChildren("seat " + seat.seat + " · " + seat.kind + " · ",
      done ? BW.chip(done.status, WORDS[done.status] || done.status) : BW.chip("probing", "thinking"),
      done ? " · " + done.seconds.toFixed(done.seconds < 1 ? 2 : 1) + " s" : "");
  }

  function fill(el, seat) {
    el.classList.remove("is-waiting");
    meta(el, seat, seat);
    const answer = el.querySelector(".answer");
    answer.replaceChildren();
    if (seat.status === "ok") {
      BW.build(seat.nodes, answer);
      el.querySelector("form.verdict").hidden = false;
    } else {
      const p = document.createElement("p");
      p.className = "seat-error";
      p.textContent = seat.error || seat.status;
      answer.replaceWith(p);
    }
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

  async function ask(form, event) {
    event.preventDefault();
    const area = document.getElementById("answers");
    const seats = area.querySelector(".seats");
    const merged = area.querySelector(".merged");
    const link = area.querySelector(".panel-link");
    const template = document.getElementById("seat-template");
    const button = form.querySelector("button[type=submit]");
    seats.replaceChildren();
    merged.replaceChildren();
    merged.hidden = true;
    link.hidden = true;
    BW.say(form, "Asking…");
    button.disabled = true;
    const columns = {};
    let mergedText = "";
    try {
      const response = await fetch(form.dataset.stream, {
        method: "POST", body: new FormData(form), credentials: "same-origin",
        headers: { "Accept": "application/x-ndjson", "X-CSRF-Token": form.querySelector('[name="csrf"]').value },
      });
      if (!response.ok) {
        let message = "The service answered " + response.status + ".";
        try { message = (await response.json()).error.message; } catch (e) { /* keep the status */ }
        throw new Error(message);
      }
      area.hidden = false;
      for await (const msg of lines(response)) {
        if (msg.panel) {
          link.href = "/calls/" + encodeURIComponent(msg.panel);
          for (const seat of msg.seats) {
            columns[seat.call] = column(template, seat);
            seats.appendChild(columns[seat.call]);
          }
          BW.fetchForms(seats);
          BW.say(form, "Waiting for " + msg.seats.length + " seats…");
        } else if (msg.seat) {
          const el = columns[msg.seat.call];
          if (el) fill(el, msg.seat);
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
        } else if (msg.error) {
          throw new Error(msg.error);
        } else if (msg.done) {
          BW.say(form, msg.done.answered + " of " + msg.done.seats + " seats answered. Judge them below.");
          link.hidden = false;
        }
      }
    } catch (err) {
      BW.say(form, err.message, true);
    } finally {
      button.disabled = false;
    }
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

  document.addEventListener("DOMContentLoaded", () => {
    const form = document.getElementById("ask-form");
    if (form && window.fetch && window.ReadableStream) form.addEventListener("submit", (e) => ask(form, e));
  });
})();
