// The headphone check's pages. A trial's three sounds are played one after another, once, with
// the gap of the published tests between them; the answer buttons open when the last has ended.
// The page knows no answer: it only plays what it was given, and the server checks the choice.
// On the level page, "The volume is set" opens once the reference noise has played.
(() => {
  "use strict";

  const wait = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  function loaded(audio) {
    return new Promise((resolve) => {
      if (audio.readyState >= HTMLMediaElement.HAVE_ENOUGH_DATA) return resolve();
      audio.addEventListener("canplaythrough", resolve, { once: true });
      // iPhone Safari loads only metadata until a tap asks for more (preload="auto" is not honoured
      // there), so the sounds are loaded from the tap on Play, never waited for before it.
      if (audio.networkState !== HTMLMediaElement.NETWORK_LOADING) audio.load();
    });
  }

  function playToEnd(audio) {
    return new Promise((resolve, reject) => {
      audio.addEventListener("ended", resolve, { once: true });
      audio.addEventListener("error", reject, { once: true });
      audio.currentTime = 0;
      audio.play().catch(reject);
    });
  }

  async function playInTurn(trial, sounds) {
    const marks = trial.querySelectorAll(".intervals li");
    const gap = Number(trial.dataset.gapMs);
    for (let i = 0; i < sounds.length; i++) {
      if (i > 0) await wait(gap);
      marks[i].classList.add("playing");
      try {
        await playToEnd(sounds[i]);
      } finally {
        marks[i].classList.remove("playing");
      }
    }
  }

  function setUpTrial(trial) {
    const button = trial.querySelector("[data-play]");
    const sounds = Array.from(trial.querySelectorAll("audio"));
    const example = trial.hasAttribute("data-example");
    const failed = document.querySelector("[data-play-error]");
    // A link that has expired or a connection that dropped: a reload brings fresh links to the same sounds.
    const unloaded = document.querySelector("[data-load-error]");
    for (const sound of sounds) sound.addEventListener("error", () => { unloaded.hidden = false; });
    button.disabled = false;
    button.addEventListener("click", async () => {
      button.disabled = true;
      failed.hidden = true;
      try {
        await Promise.all(sounds.map(loaded));
        await playInTurn(trial, sounds);
      } catch (error) {
        failed.hidden = false;
        button.disabled = false;
        return;
      }
      if (example) {
        button.disabled = false; // the example may be heard as often as wanted
        return;
      }
      trial.dataset.heard = "";
      for (const answer of document.querySelectorAll("[data-answer]")) answer.disabled = false;
    });
  }

  function setUpLevel(reference) {
    const confirm = document.querySelector("[data-after-reference]");
    confirm.disabled = true;
    reference.addEventListener("playing", () => { confirm.disabled = false; }, { once: true });
  }

  document.querySelectorAll("[data-trial]").forEach(setUpTrial);
  const reference = document.querySelector("[data-reference]");
  if (reference) setUpLevel(reference);
})();
