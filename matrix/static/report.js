// Filters for the matrix: "show only what changed" and a case-name search.
(function () {
  "use strict";

  function applyFilters() {
    var onlyChanged = document.getElementById("only-changed");
    var search = document.getElementById("case-filter");
    var needle = search ? search.value.toLowerCase() : "";
    var rows = document.querySelectorAll("#matrix tbody tr[data-case]");
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i];
      var hide = (onlyChanged && onlyChanged.checked && row.getAttribute("data-changed") !== "1") ||
        (needle !== "" && row.getAttribute("data-case").toLowerCase().indexOf(needle) === -1);
      row.hidden = hide;
      if (!hide) { shown++; }
    }
    var counter = document.getElementById("shown-count");
    if (counter) { counter.textContent = String(shown); }
  }

  document.addEventListener("DOMContentLoaded", function () {
    var onlyChanged = document.getElementById("only-changed");
    var search = document.getElementById("case-filter");
    if (onlyChanged) {
      // index.html#changed opens with the filter on (a link a CI message can carry).
      if (window.location.hash === "#changed") { onlyChanged.checked = true; }
      onlyChanged.addEventListener("change", applyFilters);
    }
    if (search) { search.addEventListener("input", applyFilters); }
    if (document.getElementById("matrix")) { applyFilters(); }
    // Lets a headless check see that the script ran to the end without an error.
    document.body.setAttribute("data-report-ready", "1");
  });
}());
