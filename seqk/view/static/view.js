// seqk view: keep a served page current while a run writes. Every 2 s it asks the server for
// the database's stamp (no database read); when it changes, or while a verdict is computing, it
// fetches this page again and replaces each [data-live] region whose HTML changed, so open
// <details> elsewhere stay open.
(function () {
  "use strict";
  var stampUrl = document.body.getAttribute("data-stamp");
  if (!stampUrl || !window.fetch) return;
  var state = document.getElementById("live-state");
  var seen = {};
  document.querySelectorAll("[data-live]").forEach(function (el) { seen[el.id] = el.innerHTML; });
  var last = null;

  function refresh() {
    return fetch(location.href, { cache: "no-store" }).then(function (r) {
      if (!r.ok) return;
      return r.text().then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (el) {
          var fresh = doc.getElementById(el.id);
          if (fresh && fresh.innerHTML !== seen[el.id]) {
            el.innerHTML = fresh.innerHTML;
            seen[el.id] = fresh.innerHTML;
          }
        });
        if (state) state.textContent = "live: updated " + new Date().toLocaleTimeString();
      });
    });
  }

  function tick() {
    fetch(stampUrl, { cache: "no-store" })
      .then(function (r) { return r.json(); })
      .then(function (body) {
        // a verdict still computing (class "computing"): fetch again until it is filled in, even if
        // it was done before the first poll read the stamp
        var changed = (last !== null && body.stamp !== last) || document.querySelector(".computing") !== null;
        last = body.stamp;
        return changed ? refresh() : null;
      })
      .catch(function () { if (state) state.textContent = "live: server unreachable"; })
      .then(function () { setTimeout(tick, 2000); });
  }
  tick();
})();
