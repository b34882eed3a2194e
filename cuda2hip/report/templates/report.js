// Filters, sortable tables and links to rule docs. No network, no libraries.
(function () {
  "use strict";
  var findings = Array.prototype.slice.call(document.querySelectorAll("li.finding"));
  var sections = Array.prototype.slice.call(document.querySelectorAll("section.file"));
  var form = document.getElementById("filters");
  var ruleSel = document.getElementById("filter-rule");
  var fileSel = document.getElementById("filter-file");
  var text = document.getElementById("filter-text");
  var suppressed = document.getElementById("filter-suppressed");
  var countEl = document.getElementById("visible-count");
  var totalEl = document.getElementById("total-count");
  var noMatch = document.getElementById("no-match");

  // What the search box looks in: the finding's head line (severity, code, message, place)
  // and its rule id, not the code around it.
  function searchText(li) {
    if (li._search === undefined) {
      li._search = (li.querySelector(".finding-head").textContent + " " +
        li.querySelector(".rule-id").textContent).toLowerCase();
    }
    return li._search;
  }

  function checkedSeverities() {
    var out = {};
    form.querySelectorAll('input[name="severity"]').forEach(function (box) { out[box.value] = box.checked; });
    return out;
  }

  function apply() {
    var sev = checkedSeverities();
    var rule = ruleSel.value, file = fileSel.value, needle = text.value.trim().toLowerCase();
    var withSuppressed = suppressed ? suppressed.checked : false;
    var filtering = rule || needle || Object.keys(sev).some(function (k) { return !sev[k]; });
    var shown = 0, total = 0;
    findings.forEach(function (li) {
      var isSuppressed = li.dataset.suppressed === "yes";
      if (!isSuppressed || withSuppressed) total += 1;
      var ok = sev[li.dataset.severity] !== false &&
        (!rule || li.dataset.rule === rule) &&
        (!file || li.dataset.file === file) &&
        (!isSuppressed || withSuppressed) &&
        (!needle || searchText(li).indexOf(needle) !== -1);
      li.hidden = !ok;
      if (ok) shown += 1;
    });
    var sectionsShown = 0;
    sections.forEach(function (sec) {
      var visible = sec.querySelectorAll("li.finding:not([hidden])").length > 0;
      // A file with only a rewrite (no findings left) stays visible unless a finding filter is on.
      var keep = visible || (!filtering && sec.dataset.hasChanges === "yes");
      if (file && sec.dataset.file !== file) keep = false;
      sec.hidden = !keep;
      if (keep) sectionsShown += 1;
    });
    countEl.textContent = shown;
    totalEl.textContent = total;
    noMatch.hidden = sectionsShown > 0 || sections.length === 0;
  }

  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  document.getElementById("filter-reset").addEventListener("click", function () {
    form.reset();
    apply();
  });

  // Buttons elsewhere on the page (severity table, rule table, rule docs) set one filter.
  document.querySelectorAll("[data-filter-rule]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      ruleSel.value = btn.dataset.filterRule;
      apply();
      document.getElementById("findings").scrollIntoView();
    });
  });
  document.querySelectorAll("[data-filter-severity]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      form.querySelectorAll('input[name="severity"]').forEach(function (box) {
        box.checked = box.value === btn.dataset.filterSeverity;
      });
      apply();
      document.getElementById("findings").scrollIntoView();
    });
  });

  // Links to a rule open its (collapsed) documentation.
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var el = id && document.getElementById(id);
    if (el && el.tagName === "DETAILS") el.open = true;
  }
  window.addEventListener("hashchange", openTarget);
  openTarget();

  // Sortable tables: click a header; numbers sort numerically (cell data-value wins over text).
  function cellValue(row, index, numeric) {
    var cell = row.children[index];
    if (!cell) return numeric ? 0 : "";
    var raw = cell.dataset.value !== undefined ? cell.dataset.value : cell.textContent.trim();
    if (!numeric) return raw.toLowerCase();
    var n = parseFloat(raw);
    return isNaN(n) ? 0 : n;
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.tHead ? Array.prototype.slice.call(table.tHead.rows[0].cells) : [];
    heads.forEach(function (th, index) {
      th.setAttribute("role", "button");
      th.tabIndex = 0;
      function sort() {
        var numeric = th.dataset.type === "num";
        var dir = th.getAttribute("aria-sort") === (numeric ? "descending" : "ascending")
          ? (numeric ? "ascending" : "descending") : (numeric ? "descending" : "ascending");
        heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", dir);
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = cellValue(a, index, numeric), y = cellValue(b, index, numeric);
          var c = x < y ? -1 : x > y ? 1 : 0;
          return dir === "ascending" ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (e) { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); sort(); } });
    });
  });

  // The page is rendered unfiltered (suppressed findings hidden); filter only when the browser
  // kept form values from an earlier visit.
  if (form.querySelector('input[name="severity"]:not(:checked)') || ruleSel.value || fileSel.value ||
      text.value || (suppressed && suppressed.checked)) apply();
})();
