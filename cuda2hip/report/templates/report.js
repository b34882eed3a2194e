// The findings (JSON data, see report/html_data.py) drawn as file sections, page by page,
// as the filters ask; sortable tables; links to rule docs. No network, no libraries.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("report-data").textContent);
  var SEV = ["hint", "info", "warning", "error"];
  var FIX = ["", "safe", "unsafe", "display-only"];
  var FIX_LABEL = ["", "safe fix", "unsafe fix", "suggestion"];
  var PAGE = 300;  // findings drawn at a time ("Show more" draws the next ones)
  var S = D.strings;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  // Messages with `code` spans, as text nodes (nothing from the data is parsed as HTML).
  function inlineCode(parent, text) {
    text.split("`").forEach(function (part, i) {
      if (!part) return;
      parent.appendChild(i % 2 ? el("code", "", part) : document.createTextNode(part));
    });
    return parent;
  }

  var findings = D.findings.map(function (a, i) {
    var f = {i: i + 1, file: a[0], line: a[1], col: a[2], ecol: a[3], rule: a[4], sev: a[5], msg: a[6],
      effort: a[7] || 0, fix: a[8] || 0, desc: a[9] || 0, preview: a[10] || 0, eline: a[1] + (a[11] || 0),
      suppressed: a[12] === 1};
    // what is left to do (report/readiness.py): a safe fix, a person's work, or advice
    f.work = f.fix === 1 ? "fix" : (f.sev >= 2 ? "manual" : "advice");
    var path = D.files[f.file];
    f.search = (SEV[f.sev] + " " + D.rules[f.rule][0] + " " + D.rules[f.rule][1] + " " + S[f.msg] + " " +
      path + ":" + f.line + ":" + f.col).toLowerCase();
    return f;
  });
  var byFile = D.files.map(function () { return []; });
  findings.forEach(function (f) { byFile[f.file].push(f); });

  // Source lines by file: {number: text or [first column, text]} from runs.
  var lineCache = {};
  function lineOf(file, n) {
    var m = lineCache[file];
    if (!m) {
      m = lineCache[file] = {};
      (D.lines[file] || []).forEach(function (run) {
        run[1].forEach(function (text, k) { m[run[0] + k] = text; });
      });
    }
    return m[n];
  }

  // --- highlighting: comments, strings, preprocessor lines, keywords, numbers (C, C++, CUDA;
  // '#' comments for CMake, Make and Python). Lines are split into code points, so columns match.
  var KEYWORDS = new Set(("auto bool break case catch char class const constexpr continue default delete do " +
    "double else enum explicit extern false float for friend goto if inline int long namespace new nullptr " +
    "operator private protected public register return short signed sizeof static static_cast struct switch " +
    "template this throw true try typedef typename union unsigned using virtual void volatile while " +
    "reinterpret_cast const_cast dynamic_cast __global__ __device__ __host__ __shared__ __constant__ " +
    "__forceinline__ __restrict__ size_t def import from as in is not and or None True False elif lambda " +
    "set function endfunction if endif foreach endforeach").split(" "));
  var TOKEN = /(\/\/.*$|\/\*.*?(?:\*\/|$)|"(?:[^"\\]|\\.)*"?|'(?:[^'\\]|\\.)*'?|\b\d[\w.']*|\b[A-Za-z_]\w*\b)/g;
  function hashComments(path) { return /(\.py|\.cmake|CMakeLists\.txt|Makefile|makefile|\.mk)$/.test(path); }
  // Spans of one line: [[class, text], ...]; `state.comment` carries a /* */ across lines.
  function tokens(text, state, hash) {
    var out = [], pos = 0, m;
    if (state.comment) {
      var end = text.indexOf("*/");
      if (end < 0) return [["c", text]];
      out.push(["c", text.slice(0, end + 2)]);
      pos = end + 2;
      state.comment = false;
    }
    if (/^\s*#\s*[a-z]/.test(text) && !hash) {
      var head = /^(\s*#\s*\w+)/.exec(text)[1];
      out.push(["p", head]);
      pos = Math.max(pos, head.length);
    }
    if (hash) {
      var cut = text.indexOf("#", pos);
      if (cut >= 0 && !/["']/.test(text.slice(pos, cut))) {
        out = out.concat(tokensOf(text.slice(pos, cut), false, state));
        out.push(["c", text.slice(cut)]);
        return out;
      }
    }
    return out.concat(tokensOf(text.slice(pos), !hash, state));
  }
  function tokensOf(text, cLike, state) {
    var out = [], last = 0, m;
    TOKEN.lastIndex = 0;
    while ((m = TOKEN.exec(text)) !== null) {
      var t = m[0], cls = "";
      if (t.charAt(0) === "/" && (t.charAt(1) === "/" || t.charAt(1) === "*")) {
        if (!cLike) { continue; }
        cls = "c";
        if (t.charAt(1) === "*" && !/\*\/$/.test(t)) state.comment = true;
      } else if (t.charAt(0) === '"' || t.charAt(0) === "'") cls = "s";
      else if (/^\d/.test(t)) cls = "n";
      else if (KEYWORDS.has(t)) cls = "k";
      if (!cls) continue;
      if (m.index > last) out.push(["", text.slice(last, m.index)]);
      out.push([cls, t]);
      last = m.index + t.length;
    }
    if (last < text.length) out.push(["", text.slice(last)]);
    return out;
  }

  // Bidirectional controls (Trojan Source) and other invisible format characters are shown.
  var HIDDEN = /[\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;
  function appendText(parent, text, cls) {
    var node = cls ? el("span", "t-" + cls) : parent;
    var last = 0, m;
    HIDDEN.lastIndex = 0;
    while ((m = HIDDEN.exec(text)) !== null) {
      if (m.index > last) node.appendChild(document.createTextNode(text.slice(last, m.index)));
      node.appendChild(el("span", "invisible", "<U+" + m[0].charCodeAt(0).toString(16).toUpperCase() + ">"));
      last = m.index + 1;
    }
    if (last < text.length) node.appendChild(document.createTextNode(text.slice(last)));
    if (cls) parent.appendChild(node);
  }

  // One line of code into `cell`; code points [lo, hi) (0-based) marked.
  function drawLine(cell, spans, lo, hi) {
    var col = 0;
    spans.forEach(function (span) {
      var cps = Array.from(span[1]);
      var a = lo - col, b = hi - col;
      if (lo < 0 || b <= 0 || a >= cps.length) {
        appendText(cell, span[1], span[0]);
      } else {
        a = Math.max(a, 0); b = Math.min(b, cps.length);
        if (a > 0) appendText(cell, cps.slice(0, a).join(""), span[0]);
        var mark = el("mark");
        appendText(mark, cps.slice(a, b).join(""), span[0]);
        cell.appendChild(mark);
        if (b < cps.length) appendText(cell, cps.slice(b).join(""), span[0]);
      }
      col += cps.length;
    });
  }

  function frame(f) {
    var path = D.files[f.file], hash = hashComments(path);
    var lastMarked = Math.min(f.eline, f.line + 5);
    var rows = [];
    for (var n = Math.max(1, f.line - 2); n <= lastMarked + 2; n++) {
      var got = lineOf(f.file, n);
      if (got === undefined) { if (n > f.line) break; else continue; }
      rows.push([n, got]);
    }
    if (!rows.length) return null;
    var table = el("table", "code-frame"), body = el("tbody"), state = {comment: false};
    table.appendChild(body);
    rows.forEach(function (row) {
      var n = row[0], text = row[1], offset = 0;
      if (Array.isArray(text)) { offset = text[0] - 1; text = text[1]; }
      var tr = el("tr"), ln = el("td", "ln", String(n)), cell = el("td", "src");
      var lo = -1, hi = -1;
      if (n >= f.line && n <= lastMarked) {
        tr.className = "marked";
        lo = (n === f.line ? f.col - 1 : 0) - offset;
        hi = (n === f.eline ? f.ecol - 1 : Infinity) - offset;
        if (n === f.line && hi <= lo) hi = lo + 1;
      }
      if (offset) cell.appendChild(el("span", "cut", "… "));
      drawLine(cell, tokens(text, state, hash), lo, hi);
      if (offset) cell.appendChild(el("span", "cut", " …"));
      tr.appendChild(ln); tr.appendChild(cell); body.appendChild(tr);
    });
    return table;
  }

  function previewBox(f) {
    var box = el("div", "fix-box fix-" + FIX[f.fix]);
    var title = el("span", "fix-title");
    var label = FIX_LABEL[f.fix];
    title.appendChild(document.createTextNode(label.charAt(0).toUpperCase() + label.slice(1) + (f.desc ? ": " : "")));
    if (f.desc) inlineCode(title, S[f.desc]);
    box.appendChild(title);
    if (f.preview) {
      var p = D.previews[f.preview - 1], pre = el("pre", "preview");
      for (var k = 0; k < p[1]; k++) {
        var old = lineOf(f.file, p[0] + k);
        if (Array.isArray(old)) old = "… " + old[1] + " …";
        pre.appendChild(el("span", "d-del", "- " + (old === undefined ? "" : old)));
      }
      p[2].forEach(function (line) { pre.appendChild(el("span", "d-add", "+ " + line)); });
      box.appendChild(pre);
    }
    return box;
  }

  function findingItem(f) {
    var path = D.files[f.file], sev = SEV[f.sev], code = D.rules[f.rule][0];
    var li = el("li", "finding sevline-" + sev);
    li.id = "finding-" + f.i;
    li.dataset.severity = sev; li.dataset.rule = code; li.dataset.file = path;
    li.dataset.work = f.work; li.dataset.suppressed = f.suppressed ? "yes" : "no";
    var head = el("div", "finding-head");
    head.appendChild(el("span", "sev sev-" + sev, sev));
    head.appendChild(document.createTextNode(" "));
    var link = el("a", "code", code); link.href = "#rule-" + code; head.appendChild(link);
    head.appendChild(document.createTextNode(" "));
    head.appendChild(inlineCode(el("span", "message"), S[f.msg]));
    var where = el("span", "where"), a = el("a", "", path + ":" + f.line + ":" + f.col);
    a.href = "#finding-" + f.i; where.appendChild(a); head.appendChild(where);
    li.appendChild(head);
    var tags = el("div", "finding-tags");
    tags.appendChild(el("span", "effort effort-" + D.efforts[f.effort], "effort " + D.efforts[f.effort]));
    if (f.fix) tags.appendChild(el("span", "fix fix-" + FIX[f.fix], FIX_LABEL[f.fix]));
    if (f.work === "manual") tags.appendChild(el("span", "badge person", "needs a person"));
    if (f.suppressed) tags.appendChild(el("span", "badge muted", "suppressed"));
    tags.appendChild(el("span", "rule-id", D.rules[f.rule][1]));
    li.appendChild(tags);
    var fr = frame(f);
    if (fr) li.appendChild(fr);
    if (f.fix) li.appendChild(previewBox(f));
    return li;
  }

  function diffBlock(file, open) {
    var text = D.diffs[file];
    var details = el("details", "diff");
    var summary = el("summary", "", "Diff of the rewrite ");
    var added = 0, removed = 0, lines = text.split("\n");
    if (lines[lines.length - 1] === "") lines.pop();
    lines.forEach(function (l) {
      if (l.charAt(0) === "+" && l.slice(0, 3) !== "+++") added++;
      else if (l.charAt(0) === "-" && l.slice(0, 3) !== "---") removed++;
    });
    summary.appendChild(el("span", "plus", "+" + added));
    summary.appendChild(document.createTextNode(" "));
    summary.appendChild(el("span", "minus", "−" + removed));
    details.appendChild(summary);
    var pre = el("pre", "diff-body");
    function fill() {
      if (pre.childNodes.length) return;
      lines.forEach(function (l) {
        var c = l.charAt(0), kind = l.slice(0, 3) === "---" || l.slice(0, 3) === "+++" ? "meta" :
          l.slice(0, 2) === "@@" ? "hunk" : c === "+" ? "add" : c === "-" ? "del" : c === "\\" ? "note" : "ctx";
        pre.appendChild(el("span", "d-" + kind, l));
      });
    }
    details.appendChild(pre);
    details.addEventListener("toggle", function () { if (details.open) fill(); });
    if (open) { fill(); details.open = true; }
    return details;
  }

  function fileSection(file, items) {
    var path = D.files[file];
    var sec = el("section", "file");
    sec.dataset.file = path;
    var h = el("h2", "file-head");
    h.appendChild(el("span", "path", path));
    var counts = el("span", "counts"), per = [0, 0, 0, 0];
    byFile[file].forEach(function (f) { if (!f.suppressed) per[f.sev]++; });
    [3, 2, 1, 0].forEach(function (s) { if (per[s]) counts.appendChild(el("span", "sev sev-" + SEV[s], per[s] + " " + SEV[s])); });
    h.appendChild(counts);
    sec.appendChild(h);
    if (D.fileErrors[file] !== undefined) sec.appendChild(el("p", "file-error", "Not processed: " + D.fileErrors[file]));
    if (D.fixed[file]) {
      var p = el("p", "applied", "Applied: ");
      D.fixed[file].forEach(function (pair) {
        var code = D.rules[pair[0]][0], chip = el("a", "chip applied-chip", code + " × " + pair[1]);
        chip.href = "#rule-" + code; chip.title = D.rules[pair[0]][1];
        p.appendChild(chip);
      });
      sec.appendChild(p);
    }
    if (D.diffs[file] !== undefined) sec.appendChild(diffBlock(file, !byFile[file].length));
    if (items.length) {
      var ol = el("ol", "finding-list");
      items.forEach(function (f) { ol.appendChild(findingItem(f)); });
      sec.appendChild(ol);
    }
    return sec;
  }

  // --- files table and the folder / file choices
  var folders = new Set();
  D.files.forEach(function (p) {
    var parts = p.split("/");
    for (var k = 1; k < parts.length; k++) folders.add(parts.slice(0, k).join("/"));
  });
  var form = document.getElementById("filters");
  var ruleSel = document.getElementById("filter-rule");
  var workSel = document.getElementById("filter-work");
  var folderSel = document.getElementById("filter-folder");
  var fileSel = document.getElementById("filter-file");
  var text = document.getElementById("filter-text");
  var suppressed = document.getElementById("filter-suppressed");
  Array.from(folders).sort().forEach(function (d) { folderSel.appendChild(new Option(d + "/", d)); });
  D.files.forEach(function (p, k) {
    var n = byFile[k].filter(function (f) { return !f.suppressed; }).length;
    if (byFile[k].length) fileSel.appendChild(new Option(p + " (" + n + ")", p));
  });

  var slot = document.getElementById("files-table-slot");
  if (slot) {
    var table = el("table", "sortable files-table"), thead = el("thead"), tr = el("tr");
    var heads = [["File", "text"], ["Findings", "num"], ["error", "num"], ["warning", "num"], ["info", "num"],
      ["hint", "num"], ["Needs a person", "num"]];
    if (D.diffs && Object.keys(D.fixed).length + Object.keys(D.diffs).length) heads.push(["Fixed", "num"]);
    heads.forEach(function (h) { var th = el("th", "", h[0]); th.dataset.type = h[1]; tr.appendChild(th); });
    thead.appendChild(tr); table.appendChild(thead);
    var tbody = el("tbody");
    D.files.forEach(function (p, k) {
      var row = el("tr"), per = [0, 0, 0, 0], manual = 0;
      byFile[k].forEach(function (f) { if (!f.suppressed) { per[f.sev]++; if (f.work === "manual") manual++; } });
      var cell = el("td"), a = el("a", "path", p);
      a.href = "#"; a.dataset.file = p;
      a.addEventListener("click", function (e) { e.preventDefault(); setOnly(fileSel, p); });
      cell.appendChild(a);
      if (D.fileErrors[k] !== undefined) { var b = el("span", "badge bad", "error"); b.title = D.fileErrors[k]; cell.appendChild(b); }
      row.appendChild(cell);
      [per[0] + per[1] + per[2] + per[3], per[3], per[2], per[1], per[0], manual].forEach(function (v) {
        row.appendChild(el("td", "n" + (v ? "" : " zero"), String(v)));
      });
      if (heads.length > 7) {
        var fixed = (D.fixed[k] || []).reduce(function (t, pair) { return t + pair[1]; }, 0);
        row.appendChild(el("td", "n" + (fixed ? "" : " zero"), String(fixed)));
      }
      tbody.appendChild(row);
    });
    table.appendChild(tbody);
    slot.appendChild(table);
  }

  // --- filtering and drawing
  var list = document.getElementById("finding-files");
  var countEl = document.getElementById("visible-count");
  var totalEl = document.getElementById("total-count");
  var noMatch = document.getElementById("no-match");
  var moreWrap = document.getElementById("more-wrap");
  var limit = PAGE, matching = [];

  function checkedSeverities() {
    var out = {};
    form.querySelectorAll('input[name="severity"]').forEach(function (box) { out[box.value] = box.checked; });
    return out;
  }

  function filtering() {
    var sev = checkedSeverities();
    return ruleSel.value || workSel.value || text.value.trim() ||
      Object.keys(sev).some(function (k) { return !sev[k]; });
  }

  function apply() {
    var sev = checkedSeverities();
    var rule = ruleSel.value, work = workSel.value, folder = folderSel.value, file = fileSel.value;
    var needle = text.value.trim().toLowerCase();
    var withSuppressed = suppressed ? suppressed.checked : false;
    var total = 0;
    matching = findings.filter(function (f) {
      if (!f.suppressed || withSuppressed) total += 1;
      var path = D.files[f.file];
      return sev[SEV[f.sev]] !== false && (!rule || D.rules[f.rule][0] === rule) && (!work || f.work === work) &&
        (!folder || path.slice(0, folder.length + 1) === folder + "/") && (!file || path === file) &&
        (!f.suppressed || withSuppressed) && (!needle || f.search.indexOf(needle) !== -1);
    });
    countEl.textContent = matching.length;
    totalEl.textContent = total;
    draw();
  }

  function draw() {
    var folder = folderSel.value, file = fileSel.value;
    var shown = matching.slice(0, limit), groups = {}, order = [];
    shown.forEach(function (f) {
      if (!groups[f.file]) { groups[f.file] = []; order.push(f.file); }
      groups[f.file].push(f);
    });
    // Files with only a rewrite or an error (no finding drawn) are listed unless a finding
    // filter is on.
    if (!filtering() && matching.length <= limit) {
      D.files.forEach(function (p, k) {
        if (groups[k] || (D.diffs[k] === undefined && !D.fixed[k] && D.fileErrors[k] === undefined)) return;
        if ((folder && p.slice(0, folder.length + 1) !== folder + "/") || (file && p !== file)) return;
        groups[k] = []; order.push(k);
      });
      order.sort(function (a, b) { return a - b; });
    }
    list.textContent = "";
    order.forEach(function (k) { list.appendChild(fileSection(k, groups[k])); });
    moreWrap.hidden = matching.length <= limit;
    if (!moreWrap.hidden) document.getElementById("show-more").textContent =
      "Show more (" + Math.min(PAGE, matching.length - limit) + " of the " + (matching.length - limit) + " not shown)";
    noMatch.hidden = order.length > 0 || D.files.length === 0;
  }

  function refilter() { limit = PAGE; apply(); }
  form.addEventListener("input", refilter);
  form.addEventListener("change", refilter);
  document.getElementById("show-more").addEventListener("click", function () { limit += PAGE; draw(); });
  document.getElementById("filter-reset").addEventListener("click", function () { form.reset(); refilter(); });

  function setOnly(select, value) {
    form.reset();
    select.value = value;
    refilter();
    document.getElementById("findings").scrollIntoView();
  }
  // Buttons elsewhere on the page (severity and rule tables, readiness, rule docs) set one filter.
  document.querySelectorAll("[data-filter-rule]").forEach(function (btn) {
    btn.addEventListener("click", function () { setOnly(ruleSel, btn.dataset.filterRule); });
  });
  document.querySelectorAll("[data-filter-folder]").forEach(function (btn) {
    btn.addEventListener("click", function () { setOnly(folderSel, btn.dataset.filterFolder); });
  });
  document.querySelectorAll("[data-filter-severity]").forEach(function (btn) {
    btn.addEventListener("click", function () {
      form.reset();
      form.querySelectorAll('input[name="severity"]').forEach(function (box) {
        box.checked = box.value === btn.dataset.filterSeverity;
      });
      refilter();
      document.getElementById("findings").scrollIntoView();
    });
  });

  // Code blocks of the rule docs, highlighted like the frames.
  document.querySelectorAll(".doc-body pre code").forEach(function (code) {
    var state = {comment: false}, lines = code.textContent.replace(/\n$/, "").split("\n");
    code.textContent = "";
    lines.forEach(function (line, k) {
      if (k) code.appendChild(document.createTextNode("\n"));
      tokens(line, state, false).forEach(function (span) { appendText(code, span[1], span[0]); });
    });
  });

  // Links to a rule open its (collapsed) documentation; a link to a finding not drawn yet
  // draws it (every finding, filters reset).
  function openTarget() {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target && /^finding-\d+$/.test(id)) {
      var k = parseInt(id.slice(8), 10);
      if (k >= 1 && k <= findings.length) {
        form.reset(); limit = Math.max(PAGE, k); apply();
        target = document.getElementById(id);
        if (target) target.scrollIntoView();
      }
    }
    if (target && target.tagName === "DETAILS") target.open = true;
  }
  window.addEventListener("hashchange", openTarget);

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

  apply();
  openTarget();
})();
