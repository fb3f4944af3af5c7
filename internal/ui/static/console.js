// toolscore console: follows a running regrade or harness run. An element
// with data-progress="URL" is polled every 2 s; each [data-field] inside
// it shows the field of that name of the JSON answer. When the answer is
// final the page reloads once, to show the finished lists. Nothing else on
// the console needs a script.
"use strict";
(function () {
  const box = document.querySelector("[data-progress]");
  if (!box) {
    return;
  }
  const url = box.getAttribute("data-progress");
  const show = function (name, value) {
    for (const el of box.querySelectorAll('[data-field="' + name + '"]')) {
      if (el.tagName === "PROGRESS") {
        el.value = value;
      } else if (name === "mean_score_delta") {
        el.textContent = (value >= 0 ? "+" : "") + value.toFixed(3);
      } else {
        el.textContent = String(value);
      }
    }
  };
  const poll = function () {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) {
        if (!r.ok) {
          throw new Error("HTTP " + r.status);
        }
        return r.json();
      })
      .then(function (p) {
        for (const k of Object.keys(p)) {
          show(k, p[k]);
        }
        if (p.final) {
          window.location.reload();
        } else {
          window.setTimeout(poll, 2000);
        }
      })
      .catch(function () {
        window.setTimeout(poll, 10000);
      });
  };
  window.setTimeout(poll, 2000);
})();
