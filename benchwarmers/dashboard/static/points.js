// A panel's points, on the Ask page and an ask's own page: a point's true / false / can't tell (or a proposal's
// confirmation) is saved in place, then the points card, each column's proposal and its marked answer are read
// again from the ask's own page. While the referee is still reading (the card says so), that page is read again
// every two seconds until its points are in. That page is made by the service's escaping renderer (every value escaped, the
// quotes escaped before they are marked), so its nodes are parsed inert (DOMParser runs nothing) and moved here.
"use strict";
(function () {
  function panelOf(form) {
    const back = form.querySelector('[name="back"]');
    const cut = back ? back.value.indexOf("/calls/") : -1;
    return cut === 0 ? decodeURIComponent(back.value.slice(7)) : null;
  }

  function columnOf(doc, call) {
    return [...doc.querySelectorAll(".seat[data-call]")].find((el) => el.dataset.call === call) || null;
  }

  // The points card above the columns, and per column its marked answer and its proposal (and, after a
  // confirmation, its verdict form) as the ask's own page shows them now.
  async function lift(panel, verdicts) {
    const response = await fetch("/calls/" + encodeURIComponent(panel),
      { credentials: "same-origin", headers: { "Accept": "text/html" } });
    if (!response.ok) return;
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    const card = doc.getElementById("points");
    const seats = document.querySelector("#answers .seats") || document.querySelector("section.seats");
    if (card && seats) {
      const node = document.importNode(card, true);
      const here = document.getElementById("points");
      if (here) here.replaceWith(node);
      else (document.querySelector("#answers [data-save-all-box]") || seats).before(node);
    }
    for (const mine of seats ? seats.querySelectorAll(".seat[data-call]") : []) {
      const theirs = columnOf(doc, mine.dataset.call);
      if (!theirs) continue;
      const answer = theirs.querySelector(".answer"), old = mine.querySelector(".answer");
      if (answer && old && answer.querySelector("mark") && !old.querySelector("mark")) {
        old.replaceWith(document.importNode(answer, true));
        BW.fold(mine);
      }
      const oldProposal = mine.querySelector("form.proposal");
      if (oldProposal) oldProposal.remove();
      const proposal = theirs.querySelector("form.proposal");
      const form = mine.querySelector("form.verdict");
      if (proposal && form) form.before(document.importNode(proposal, true));
      const fresh = theirs.querySelector("form.verdict");
      if (verdicts && fresh && form) {
        const node = document.importNode(fresh, true);
        form.replaceWith(node);
        BW.fetchForms(node.parentElement);
      }
    }
  }

  function pending() {
    return document.querySelector("#points [data-points-pending]") !== null;
  }

  // The referee reads the answers after the reply: read the ask's page until its points are in (or ten minutes).
  async function follow(panel) {
    for (let round = 0; round < 300 && pending(); round += 1) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      try { await lift(panel, false); } catch (err) { /* the next round tries again */ }
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    const here = location.pathname.match(/^\/calls\/([^/]+)$/);
    if (here && pending()) follow(decodeURIComponent(here[1]));
  });

  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.matches("form.point-verdict, form.proposal")) return;
    const panel = panelOf(form);
    if (!panel) return;                          // posts as a plain form
    event.preventDefault();
    const body = new URLSearchParams(new FormData(form));
    if (event.submitter && event.submitter.name) body.set(event.submitter.name, event.submitter.value);
    const point = body.get("point"), call = body.get("call");
    BW.say(form, "Saving…");
    try {
      const data = await BW.send(form.action, body);
      await lift(panel, form.matches("form.proposal"));
      const again = point
        ? [...document.querySelectorAll("li.point[data-point]")].find((li) => li.dataset.point === point)
        : columnOf(document, call);
      const target = again ? again.querySelector("form.point-verdict, form.verdict") : null;
      BW.say(target || form, data.message || "Saved.");
    } catch (err) {
      BW.say(form, err.message, true);
    }
  });

  window.BW.points = { lift, follow, pending };
})();
