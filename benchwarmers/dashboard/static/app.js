// Benchwarmers dashboard: small enhancements over pages that work without script.
// Text from the service is set with textContent or built as DOM nodes; never with innerHTML.
"use strict";
(function () {
  const csrf = () => (document.querySelector('meta[name="csrf-token"]') || {}).content || "";

  // POST a form's fields (or FormData) and read the JSON answer; refusals come back as {error: {message}}.
  async function send(url, body) {
    const response = await fetch(url, {
      method: "POST", body, credentials: "same-origin",
      headers: { "Accept": "application/json", "X-CSRF-Token": csrf() },
    });
    let data = {};
    try { data = await response.json(); } catch (e) { data = {}; }
    if (!response.ok) {
      const message = (data.error && data.error.message) || ("The service answered " + response.status + ".");
      throw new Error(message);
    }
    // a judgement saved in place: a page that shows a blind panel may now name its models (ask.js)
    document.dispatchEvent(new CustomEvent("bw:sent", { detail: { url } }));
    return data;
  }

  function say(form, text, bad) {
    const out = form.querySelector("[data-status]");
    if (out) { out.textContent = text; out.classList.toggle("bad", !!bad); }
  }

  // Markdown nodes from the server ({t, c, href?, start?}) built as elements of an allowed set.
  const TAGS = new Set(["p", "h3", "h4", "h5", "h6", "ul", "ol", "li", "pre", "code", "blockquote", "hr", "strong",
    "em", "del", "a", "table", "thead", "tbody", "tr", "th", "td", "br"]);
  function build(nodes, parent) {
    for (const n of nodes || []) {
      if (typeof n === "string") { parent.appendChild(document.createTextNode(n)); continue; }
      const el = document.createElement(TAGS.has(n.t) ? n.t : "span");
      if (n.t === "a" && /^(https?:\/\/|mailto:)/i.test(n.href || "")) {
        el.setAttribute("href", n.href);
        el.setAttribute("rel", "noopener noreferrer nofollow");
      }
      if (n.t === "ol" && Number.isInteger(n.start)) el.setAttribute("start", String(n.start));
      build(n.c, el);
      parent.appendChild(el);
    }
    return parent;
  }

  function chip(state, text) {
    const el = document.createElement("span");
    el.className = "chip chip-" + String(state).toLowerCase().replace(/[^a-z-]/g, "");
    el.textContent = text || state;
    return el;
  }

  // Forms marked data-fetch save in place (verdicts): the page stays where it is.
  function fetchForms(root) {
    for (const form of root.querySelectorAll("form[data-fetch]")) {
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const button = form.querySelector("button[type=submit]");
        if (button) button.disabled = true;
        say(form, "Saving…");
        try {
          const data = await send(form.action, new URLSearchParams(new FormData(form)));
          say(form, data.message || "Saved.");
          if (button) button.textContent = "Change verdict";
        } catch (err) {
          say(form, err.message, true);
        } finally {
          if (button) button.disabled = false;
        }
      });
    }
  }

  // Copy buttons: data-copy="#id" copies that element's text.
  function copyButtons() {
    document.addEventListener("click", async (event) => {
      const button = event.target.closest("button[data-copy]");
      if (!button) return;
      const source = document.querySelector(button.dataset.copy);
      if (!source) return;
      try {
        await navigator.clipboard.writeText(source.textContent);
        button.textContent = "Copied";
      } catch (err) {
        const range = document.createRange();
        range.selectNodeContents(source);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        button.textContent = "Selected: copy it";
      }
    });
  }

  // Onboarding: queue the ticked models without leaving, then follow each one's state beside it.
  const WORDS = { queued: "queued", probing: "probing", suite: "running the suite", done: "done", failed: "failed" };
  const OPEN = new Set(["queued", "probing", "suite"]);
  function reason(text) {
    const span = document.createElement("span");
    span.className = "reason";
    span.textContent = text;
    return span;
  }
  function showItem(cell, item) {
    cell.dataset.item = item.id;
    cell.dataset.state = item.state;
    cell.replaceChildren(chip(item.state, WORDS[item.state] || item.state));
    if (item.state === "suite" && item.progress) {
      cell.append(" ", reason(item.progress.done + " of " + item.progress.total));
    } else if (item.state === "done" && item.model) {
      const a = document.createElement("a");
      a.href = "/models/" + encodeURIComponent(item.model);
      a.textContent = item.model;
      cell.append(" as ", a);
    } else if (item.state === "failed" && item.reason) {
      cell.append(" ", reason(item.reason));
    }
    const box = cell.closest("tr") && cell.closest("tr").querySelector("input[type=checkbox]");
    if (box) { box.disabled = OPEN.has(item.state) || item.state === "done"; box.checked = false; }
  }
  // Every form marked data-onboard queues in place; a data-once form (Discover's one-click button) goes away
  // once its model is queued. One poll follows every open item on the page.
  function followOnboarding(forms) {
    let timer = null;
    async function poll() {
      const cells = [...document.querySelectorAll(".progress[data-item]")].filter((c) => OPEN.has(c.dataset.state));
      if (!cells.length) { timer = null; return; }
      const ids = [...new Set(cells.map((c) => c.dataset.item))].join(",");
      try {
        const response = await fetch("/bench/onboard?ids=" + ids, { headers: { "Accept": "application/json" } });
        const data = await response.json();
        for (const item of data.items || []) {
          for (const cell of cells.filter((c) => c.dataset.item === String(item.id))) showItem(cell, item);
        }
      } catch (err) { /* try again on the next tick */ }
      timer = setTimeout(poll, 1000);
    }
    const start = () => { if (!timer) timer = setTimeout(poll, 500); };
    for (const form of forms) {
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        say(form, "Queueing…");
        try {
          const data = await send(form.action, new URLSearchParams(new FormData(form)));
          for (const item of data.items || []) {
            const key = (item.endpoint || "") + "|" + item.served;
            for (const cell of document.querySelectorAll(".progress")) {
              if (cell.dataset.key === key) showItem(cell, item);
            }
          }
          if (form.hasAttribute("data-once")) form.hidden = true;
          else say(form, data.message);
          start();
        } catch (err) {
          say(form, err.message, true);
        }
      });
    }
    start();
  }

  // A list filter as you type (the Find form still works without script).
  function filters() {
    for (const input of document.querySelectorAll("input[data-filter]")) {
      const rows = () => document.querySelectorAll(input.dataset.filter + " tbody tr");
      input.addEventListener("input", () => {
        const needle = input.value.trim().toLowerCase();
        for (const row of rows()) row.hidden = needle !== "" && !row.textContent.toLowerCase().includes(needle);
      });
    }
  }

  // The collection editor's live count of the calls one ask makes (explorers as seating picks them for the
  // saved purpose: a changed purpose counts once saved; the referee when its points are not off).
  function seatCount(form) {
    const out = form.querySelector(".live-count");
    if (!out) return;
    const explorers = Number(out.dataset.explorers || 0);
    function update() {
      const boxes = [...form.querySelectorAll('input[name="members"]')];
      const members = boxes.filter((b) => b.checked && b.dataset.active === "1");
      const freed = boxes.filter((b) => b.checked && b.dataset.explorer === "1").length;
      const pool = Math.max(0, explorers - freed);
      const explore = Math.min(Number(form.querySelector('[name="explore"]').value || 0), pool);
      const points = form.querySelector('[name="points"]');
      const referee = points && points.value !== "off" ? 1 : 0;
      const calls = members.length + explore + referee;
      const strong = document.createElement("strong");
      strong.textContent = "One ask makes " + calls + (calls === 1 ? " call" : " calls");
      out.replaceChildren(strong, ": " + members.length + (members.length === 1 ? " member" : " members") +
        " + " + explore + (explore === 1 ? " explore seat" : " explore seats") +
        (referee ? " + the referee (after the reply)" : "") + "; :merged adds one for the merge.");
    }
    form.addEventListener("input", update);
    form.addEventListener("change", update);
    update();
  }

  // The API select fills a placeholder base URL for that protocol.
  function apiPlaceholder() {
    const select = document.querySelector("select[data-bases]");
    const base = document.getElementById("ep-base");
    if (!select || !base) return;
    const bases = JSON.parse(select.dataset.bases);
    const examples = { openai: "https://openrouter.ai/api/v1" };
    const update = () => { base.placeholder = examples[select.value] || bases[select.value] || ""; };
    select.addEventListener("change", update);
    update();
  }

  // A ticked box marked data-confirm asks once more before its form goes (without script the box alone says it).
  function confirmBoxes() {
    document.addEventListener("submit", (event) => {
      for (const box of event.target.querySelectorAll("input[data-confirm]:checked")) {
        if (!window.confirm(box.dataset.confirm)) { event.preventDefault(); event.stopImmediatePropagation(); return; }
      }
    }, true);
  }

  // Long answers fold to about a screen with "Show all", so each column's verdict form stays near its top.
  const FOLD = 480;
  function fold(root) {
    for (const answer of root.querySelectorAll(".answer[data-fold]")) {
      if (answer.dataset.folded || answer.scrollHeight <= FOLD * 1.25) continue;
      answer.dataset.folded = "1";
      answer.classList.add("folded");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "secondary show-all";
      button.textContent = "Show all";
      button.addEventListener("click", () => {
        const open = answer.classList.toggle("folded");
        button.textContent = open ? "Show all" : "Fold";
      });
      answer.after(button);
    }
  }

  // "Save all verdicts": every verdict form on the page with a choice made is saved, one request each.
  function saveAll(root) {
    for (const button of (root || document).querySelectorAll("button[data-save-all]")) {
      button.hidden = false;
      const box = button.closest("[data-save-all-box]") || button.parentElement;
      button.addEventListener("click", async () => {
        const forms = [...document.querySelectorAll("form.verdict")].filter(
          (f) => !f.hidden && f.querySelector('input[name="useful"]:checked'));
        if (!forms.length) { say(box, "Choose Useful or Not useful in a column first.", true); return; }
        button.disabled = true;
        let saved = 0;
        for (const form of forms) {
          try {
            const data = await send(form.action, new URLSearchParams(new FormData(form)));
            say(form, data.message || "Saved.");
            const submit = form.querySelector("button[type=submit]");
            if (submit) submit.textContent = "Change verdict";
            saved += 1;
          } catch (err) {
            say(form, err.message, true);
          }
        }
        say(box, saved + " of " + forms.length + (forms.length === 1 ? " verdict" : " verdicts") + " saved.",
          saved < forms.length);
        button.disabled = false;
      });
    }
  }

  // A "tick every" box: ticks (or clears) every enabled, shown checkbox of that name in its form.
  function selectAll() {
    for (const every of document.querySelectorAll("input[data-select-all]")) {
      const boxes = () => [...every.form.querySelectorAll('input[type=checkbox][name="' + every.dataset.selectAll +
        '"]')].filter((b) => !b.disabled && !b.closest("tr[hidden]"));
      every.addEventListener("change", () => { for (const box of boxes()) box.checked = every.checked; });
    }
  }

  window.BW = { send, build, chip, fetchForms, say, fold, saveAll, csrf };
  document.addEventListener("DOMContentLoaded", () => {
    fetchForms(document);
    fold(document);
    saveAll();
    selectAll();
    copyButtons();
    confirmBoxes();
    filters();
    apiPlaceholder();
    const onboarding = document.querySelectorAll("form[data-onboard]");
    if (onboarding.length) followOnboarding(onboarding);
    const seats = document.querySelector("form[data-seats]");
    if (seats) seatCount(seats);
  });
})();
