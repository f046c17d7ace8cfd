// The annotation page: word levels, keyboard use, and playback reports.
// The server decides everything; this only helps the participant and tells
// the server what the audio element did, as it happens.
(() => {
  "use strict";
  const LEVELS = 3;
  const REPORTED = ["play", "pause", "seeking", "seeked", "timeupdate", "ended", "ratechange"];

  function csrfToken() {
    return JSON.parse(document.body.getAttribute("hx-headers"))["X-CSRFToken"];
  }

  function setup(root) {
    const section = root.id === "task-item" ? root : root.querySelector && root.querySelector("#task-item");
    if (!section || section.dataset.ready) return;
    section.dataset.ready = "1";
    const audio = section.querySelector("audio");
    const form = section.querySelector("form");
    const levelsInput = form.querySelector("input[name=levels]");
    const words = Array.from(section.querySelectorAll(".word"));
    const submit = form.querySelector("#submit");
    const reason = form.querySelector("#gate-reason");
    const levelNames = reason.dataset.levels.split("|");
    const fewest = Number(section.dataset.min);
    const most = Number(section.dataset.max);
    let pending = [];
    let timer = null;
    let heard = false;

    function flush() {
      clearTimeout(timer);
      timer = null;
      if (!pending.length) return;
      const body = JSON.stringify(pending);
      pending = [];
      fetch(section.dataset.eventsUrl, {
        method: "POST", body, keepalive: true, credentials: "same-origin",
        headers: {"Content-Type": "application/json", "X-CSRFToken": csrfToken()},
      });
    }

    function report(kind) {
      pending.push({kind, t: audio.currentTime, rate: audio.playbackRate, at: performance.now()});
      if (kind !== "timeupdate") flush();
      else if (!timer) timer = setTimeout(flush, 1000);
      if (kind === "ended") { heard = true; update(); }
    }

    function update() {
      const marked = words.filter((word) => word.dataset.level !== "0").length;
      let why = "";
      if (!heard) why = reason.dataset.listen;
      else if (marked < fewest) why = reason.dataset.tooFew;
      else if (marked > most) why = reason.dataset.tooMany;
      reason.textContent = why;
      submit.disabled = why !== "";
    }

    function setLevel(word, level) {
      word.dataset.level = String(level);
      word.setAttribute("aria-pressed", level > 0 ? "true" : "false");
      word.querySelector(".level-name").textContent = ", " + levelNames[level];
      levelsInput.value = words.map((w) => w.dataset.level).join(",");
      update();
    }

    function move(word, key) {
      // Left and Right follow reading order, also in right-to-left scripts.
      const rtl = getComputedStyle(word.parentElement).direction === "rtl";
      const step = (key === "ArrowRight") !== rtl ? 1 : -1;
      const next = words[words.indexOf(word) + step];
      if (next) next.focus();
    }

    REPORTED.forEach((kind) => audio.addEventListener(kind, () => report(kind)));
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
    // Events not yet sent travel with the submission, so none is lost.
    form.addEventListener("htmx:configRequest", (event) => {
      clearTimeout(timer);
      timer = null;
      event.detail.parameters.events = JSON.stringify(pending);
      pending = [];
    });
    update();
  }

  document.addEventListener("htmx:load", (event) => setup(event.detail.elt));
  document.addEventListener("DOMContentLoaded", () => setup(document));
})();
