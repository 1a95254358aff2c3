// Live refresh of the job page: poll the read-only drift.json and reload
// when the job's drift or versions change. The page works without it.
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) { return; }
  var url = live.getAttribute("data-drift-url");
  var token = live.getAttribute("data-token");
  var every = parseInt(live.getAttribute("data-refresh-ms"), 10);
  if (!url || !(every > 0)) { return; }
  function poll() {
    fetch(url, { cache: "no-store", credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (doc) {
        if (doc && doc.token && doc.token !== token) {
          live.textContent = "New drift or a new version: reloading…";
          window.location.reload();
          return;
        }
        window.setTimeout(poll, every);
      })
      .catch(function () { window.setTimeout(poll, every * 2); });
  }
  window.setTimeout(poll, every);
})();
