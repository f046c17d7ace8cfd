// The annotation page: word levels, keyboard use, and playback reports.
// The server decides everything; this only helps the participant and tells
// the server what the audio element did.
(() => {
  "use strict";
  const LEVELS = 3;
  const REPORTED = ["play", "pause", "seeking", "seeked", "timeupdate", "ended", "ratechange"];
  // The server takes at most MOST events a report; a long listen sends them on
  // ahead in batches of BATCH.
  const BATCH = 100;
  const MOST = 200;
  // Names this page load in every report: the server times each load's page
  // clock on its own, so a reload starts afresh instead of counting for nothing.
  const PAGE_LOAD = crypto.getRandomValues(new Uint32Array(1))[0] >>> 1;

  function csrfToken() {
    return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"];
  }

  function setup(root) {
    const section = root.id === "task-item" ? root : root.querySelector && root.querySelector("#task-item");
    if (!section || section.dataset.ready) return;
    section.dataset.ready = "1";
    const form = section.querySelector("form");
    const submit = form.querySelector("#submit");
    const reason = form.querySelector("#gate-reason");
    const players = Array.from(section.querySelectorAll("audio"));
    const heard = new Set();
    const serverErrors = form.querySelector("#gate-errors");
    let sending = Promise.resolve();
    const marking = section.querySelector("button.word") ? wordMarking(section, form, reason) : null;
    let pending = [];

    function flush() {
      while (pending.length) {
        const batch = pending.splice(0, BATCH);
        // A batch the server did not answer for goes back to wait for the next send.
        const keep = () => { pending = batch.concat(pending); };
        const sent = fetch(section.dataset.eventsUrl, {
          method: "POST", body: JSON.stringify(batch), keepalive: true, credentials: "same-origin",
          headers: {"Content-Type": "application/json", "X-CSRFToken": csrfToken()},
        }).then((answer) => { if (answer.status >= 500) keep(); }, keep);
        sending = Promise.all([sending, sent]);
      }
    }

    function report(audio, kind) {
      const track = Number(audio.dataset.track || 0);
      pending.push({
        kind, track, t: audio.currentTime, rate: audio.playbackRate, at: performance.now(), page: PAGE_LOAD,
      });
      // The server times listening from when it handed the clip out, so the
      // reports can wait for the submit: one request per clip. Only a long
      // listen sends a batch ahead.
      if (pending.length >= BATCH) flush();
      if (kind === "ended") {
        heard.add(track);
        audio.dataset.heard = "true";
        serverErrors.replaceChildren();
        update();
      }
    }

    function update() {
      let why = heard.size < players.length ? reason.dataset.listen : "";
      if (!why && marking) why = marking.problem();
      reason.textContent = why;
      submit.disabled = why !== "";
    }

    players.forEach((audio) => REPORTED.forEach((kind) => audio.addEventListener(kind, () => report(audio, kind))));
    // A clip started before this ran (a quick click while htmx settled the new clip in) would
    // otherwise be heard with no "play" report, and none of its listening would count.
    players.forEach((audio) => { if (!audio.paused) report(audio, "play"); });
    // Leaving or reloading the page: what was played still reaches the server.
    window.addEventListener("pagehide", () => { if (section.isConnected) flush(); });
    if (marking) marking.onChange(() => { serverErrors.replaceChildren(); update(); });
    // Reports not yet sent travel with the submission; one already on its way
    // is waited for, so the server has every report before it judges the answer.
    form.addEventListener("htmx:confirm", (event) => {
      event.preventDefault();
      if (pending.length > BATCH) flush();  // kept back by a failed send: more than a submit should carry
      sending.then(() => event.detail.issueRequest(true));
    });
    // The reports a submit carries are the page's until the server answers it: a network
    // error or a 5xx (a worker killed, a proxy with no upstream, the database unreachable
    // for a moment: 503) may have lost them with the submit, which the server rolled back.
    // The submit is then sent again once by itself, with them; a resend of an answer the
    // server did store is taken as that one, so nothing is counted twice.
    let carried = [];
    let retried = false;
    form.addEventListener("htmx:configRequest", (event) => {
      carried = pending.slice(0, MOST);  // the most the server reads from one submit
      pending = pending.slice(MOST);
      event.detail.parameters.events = JSON.stringify(carried);
    });
    form.addEventListener("htmx:afterRequest", (event) => {
      const xhr = event.detail.xhr;
      const status = xhr ? xhr.status : 0;
      if (status !== 0 && status < 500) {  // answered: taken, or refused with the reports stored
        carried = [];
        retried = false;
        return;
      }
      pending = carried.concat(pending);
      carried = [];
      if (retried) {
        serverErrors.textContent = reason.dataset.unavailable;
        retried = false;
        return;
      }
      retried = true;
      const seconds = Math.min(Number(status === 503 && xhr.getResponseHeader("Retry-After")) || 2, 10);
      setTimeout(() => htmx.trigger(form, "submit"), seconds * 1000);
    });
    update();
  }

  // The emphasis widget: three levels per word, by click, tap or keyboard.
  function wordMarking(section, form, reason) {
    const levelsInput = form.querySelector("input[name=levels]");
    const words = Array.from(section.querySelectorAll("button.word"));
    const levelNames = reason.dataset.levels.split("|");
    const fewest = Number(section.dataset.min);
    const most = Number(section.dataset.max);
    let changed = () => {};

    function setLevel(word, level) {
      word.dataset.level = String(level);
      word.setAttribute("aria-pressed", level > 0 ? "true" : "false");
      word.querySelector(".level-name").textContent = ", " + levelNames[level];
      levelsInput.value = words.map((w) => w.dataset.level).join(",");
      changed();
    }

    function move(word, key) {
      // Left and Right follow reading order, also in right-to-left scripts.
      const rtl = getComputedStyle(word.parentElement).direction === "rtl";
      const step = (key === "ArrowRight") !== rtl ? 1 : -1;
      const next = words[words.indexOf(word) + step];
      if (next) next.focus();
    }

    words.forEach((word) => {
      word.querySelector(".level-name").textContent = ", " + levelNames[0];
      word.addEventListener("click", () => setLevel(word, (Number(word.dataset.level) + 1) % LEVELS));
      word.addEventListener("keydown", (event) => {
        if (["0", "1", "2"].includes(event.key)) setLevel(word, Number(event.key));
        else if (event.key === "ArrowRight" || event.key === "ArrowLeft") move(word, event.key);
        else return;
        event.preventDefault();
      });
    });
    return {
      onChange(callback) { changed = callback; },
      problem() {
        const marked = words.filter((word) => word.dataset.level !== "0").length;
        if (marked < fewest) return reason.dataset.tooFew;
        if (marked > most) return reason.dataset.tooMany;
        return "";
      },
    };
  }

  document.addEventListener("htmx:load", (event) => setup(event.detail.elt));
  document.addEventListener("DOMContentLoaded", () => setup(document));
})();
