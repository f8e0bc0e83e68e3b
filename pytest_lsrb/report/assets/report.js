// The item table of an lsrb report: filter, sort and open attempts, rendering only visible rows.
// Every value comes from a run (model output included) and reaches the DOM through textContent.
(function () {
  "use strict";
  var started = window.performance.now();
  var body = document.body;
  var errorCount = 0;
  window.addEventListener("error", function () {
    errorCount += 1;
    body.setAttribute("data-lsrb-errors", String(errorCount));
  });

  var source = document.getElementById("lsrb-items");
  if (!source) { return; }
  var data = JSON.parse(source.textContent);
  var rows = data.rows;
  var col = {};
  data.columns.forEach(function (name, i) { col[name] = i; });

  var ROW_H = 28;       // px, fixed so the visible window is arithmetic, not measurement
  var OVERSCAN = 8;     // rows rendered above and below the viewport
  var viewport = document.getElementById("it-viewport");
  var spacer = document.getElementById("it-spacer");
  var layer = document.getElementById("it-rows");
  var countLabel = document.getElementById("it-count");
  var textBox = document.getElementById("it-text");
  var outcomeBox = document.getElementById("it-outcome");
  var groupBox = document.getElementById("it-group");
  var flipBox = document.getElementById("it-flip");
  var detail = document.getElementById("it-detail");
  var visible = [];     // indices into rows, filtered and sorted
  var sortKey = "item";
  var sortDir = 1;
  var haystack = null;  // lower-cased search text per row, built on first search
  var selected = -1;

  var SHOWN = ["item", "k", "outcome", "answer", "verdict", "latency", "group"];
  if (data.tokens) { SHOWN.splice(SHOWN.indexOf("latency") + 1, 0, "tokens"); }
  if (data.baseline) { SHOWN.push("base", "base_answer"); }  // the two runs' answers side by side

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function cellText(r, name) {
    var v = r[col[name]];
    if (name === "latency") { return lsrbLatency(v); }
    if (name === "k") { return "s" + v; }
    if (name === "answer" || name === "base_answer") { return v === null || v === undefined ? "" : String(v).split("\n")[0]; }
    return v === null || v === undefined ? "" : String(v);
  }

  // -- filters --------------------------------------------------------------------------------

  var groups = {};
  rows.forEach(function (r) { var g = r[col.group]; if (g) { groups[g] = true; } });
  Object.keys(groups).sort().forEach(function (g) {
    var opt = el("option", null, g);
    opt.value = g;
    groupBox.appendChild(opt);
  });
  if (Object.keys(groups).length === 0) { groupBox.parentNode.style.display = "none"; }
  if (!data.baseline && flipBox) { flipBox.parentNode.style.display = "none"; }

  function buildHaystack() {
    haystack = rows.map(function (r) {
      return [r[col.item], r[col.answer], r[col.verdict], r[col.raw], r[col.group]].join("\u0000").toLowerCase();
    });
  }

  function applyFilters() {
    var text = textBox.value.trim().toLowerCase();
    var outcome = outcomeBox.value;
    var group = groupBox.value;
    var flip = flipBox ? flipBox.value : "";
    if (text && haystack === null) { buildHaystack(); }
    visible = [];
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      if (outcome && r[col.outcome] !== outcome) { continue; }
      if (group && r[col.group] !== group) { continue; }
      if (flip === "changed" && (!r[col.base] || r[col.base] === r[col.outcome])) { continue; }
      if ((flip === "regressed" || flip === "improved") && r[col.flip] !== flip) { continue; }
      if (text && haystack[i].indexOf(text) < 0) { continue; }
      visible.push(i);
    }
    sortVisible();
  }

  // -- sorting --------------------------------------------------------------------------------

  function compareValues(a, b) {
    var aNull = a === null || a === undefined || a === "";
    var bNull = b === null || b === undefined || b === "";
    if (aNull || bNull) { return aNull === bNull ? 0 : (aNull ? 1 : -1); }
    if (typeof a === "number" && typeof b === "number") { return a - b; }
    return String(a) < String(b) ? -1 : (String(a) > String(b) ? 1 : 0);
  }

  function sortVisible() {
    var c = col[sortKey];
    var k = col.k;
    var item = col.item;
    visible.sort(function (x, y) {
      var rx = rows[x], ry = rows[y];
      var d = compareValues(rx[c], ry[c]);
      if (d === 0) { d = compareValues(rx[item], ry[item]) || (rx[k] - ry[k]); }
      // Missing values stay last whichever way the column is sorted.
      var missing = rx[c] === null || rx[c] === "" || ry[c] === null || ry[c] === "";
      return missing ? d : d * sortDir;
    });
    document.querySelectorAll(".it-head button").forEach(function (b) {
      var on = b.getAttribute("data-col") === sortKey;
      b.setAttribute("aria-sort", on ? (sortDir > 0 ? "ascending" : "descending") : "none");
    });
    countLabel.textContent = visible.length === rows.length
      ? rows.length + " attempts"
      : visible.length + " of " + rows.length + " attempts";
    spacer.style.height = (visible.length * ROW_H) + "px";
    viewport.scrollTop = 0;
    render();
  }

  // -- virtual rendering ----------------------------------------------------------------------

  function render() {
    var first = Math.max(0, Math.floor(viewport.scrollTop / ROW_H) - OVERSCAN);
    var count = Math.ceil(viewport.clientHeight / ROW_H) + 2 * OVERSCAN;
    var last = Math.min(visible.length, first + count);
    var frag = document.createDocumentFragment();
    for (var pos = first; pos < last; pos++) {
      var idx = visible[pos];
      var r = rows[idx];
      var line = el("div", "it-row outcome-" + r[col.outcome] + (idx === selected ? " selected" : ""));
      line.style.top = (pos * ROW_H) + "px";
      line.setAttribute("data-idx", String(idx));
      line.setAttribute("role", "row");
      SHOWN.forEach(function (name) {
        var cell = el("span", "c-" + name, cellText(r, name));
        if (name === "outcome" || name === "base") { cell.className += " badge b-" + r[col[name]]; }
        line.appendChild(cell);
      });
      frag.appendChild(line);
    }
    layer.textContent = "";
    if (visible.length === 0) { frag.appendChild(el("div", "it-empty", "No attempt matches these filters.")); }
    layer.appendChild(frag);
    body.setAttribute("data-lsrb-rows-dom", String(last - first));
    body.setAttribute("data-lsrb-rows-shown", String(visible.length));
  }

  var pending = false;
  viewport.addEventListener("scroll", function () {
    if (pending) { return; }
    pending = true;
    window.requestAnimationFrame(function () { pending = false; render(); });
  });

  // -- detail ---------------------------------------------------------------------------------

  function section(title, text, cls) {
    var box = el("div", "d-section");
    box.appendChild(el("h4", null, title));
    box.appendChild(el("pre", cls || null, text === null || text === undefined || text === "" ? "(none)" : text));
    return box;
  }

  function showDetail(idx) {
    var r = rows[idx];
    if (!r) { return; }
    selected = idx;
    detail.textContent = "";
    var head = el("div", "d-head");
    head.appendChild(el("strong", null, r[col.item] + " #s" + r[col.k]));
    head.appendChild(el("span", "badge b-" + r[col.outcome], r[col.outcome]));
    if (r[col.base]) { head.appendChild(el("span", "badge b-" + r[col.base], "baseline: " + r[col.base])); }
    if (r[col.flip]) { head.appendChild(el("span", "flip-" + r[col.flip], r[col.flip])); }
    var close = el("button", "d-close", "close");
    close.type = "button";
    close.addEventListener("click", function () { hideDetail(); });
    head.appendChild(close);
    detail.appendChild(head);
    var verdict = r[col.verdict] + (r[col.message] ? "\n" + r[col.message] : "");
    detail.appendChild(section("Verdict", verdict));
    detail.appendChild(section("Extracted answer", r[col.answer], "answer"));
    if (data.baseline) { detail.appendChild(section("Baseline answer", r[col.base_answer], "answer")); }
    detail.appendChild(section("Raw output", r[col.raw], "raw"));
    var promptKey = r[col.prompt];
    var prompt = promptKey ? data.prompts[promptKey] : null;
    detail.appendChild(section("Prompt", prompt || "(this run's records do not carry the prompt text)", "prompt"));
    var extra = r[col.extra] || {};
    var table = el("table", "d-fields");
    Object.keys(extra).forEach(function (key) {
      var tr = el("tr");
      tr.appendChild(el("th", null, key));
      tr.appendChild(el("td", null, extra[key]));
      table.appendChild(tr);
    });
    var fields = el("div", "d-section");
    fields.appendChild(el("h4", null, "Record fields"));
    fields.appendChild(table);
    detail.appendChild(fields);
    detail.hidden = false;
    body.setAttribute("data-lsrb-detail", r[col.item] + "#s" + r[col.k]);
    render();
  }

  function hideDetail() {
    selected = -1;
    detail.hidden = true;
    body.removeAttribute("data-lsrb-detail");
    writeHash();
    render();
  }

  layer.addEventListener("click", function (ev) {
    var node = ev.target;
    while (node && node !== layer && !node.hasAttribute("data-idx")) { node = node.parentNode; }
    if (!node || node === layer) { return; }
    showDetail(Number(node.getAttribute("data-idx")));
    writeHash();
  });

  // -- the URL fragment holds the view, so a link can share it ----------------------------------
  // #q=TEXT&outcome=fail&group=G&flip=regressed&sort=-latency&attempt=ITEM:K (all optional)

  function writeHash() {
    var params = new URLSearchParams();
    if (textBox.value.trim()) { params.set("q", textBox.value.trim()); }
    if (outcomeBox.value) { params.set("outcome", outcomeBox.value); }
    if (groupBox.value) { params.set("group", groupBox.value); }
    if (flipBox && flipBox.value) { params.set("flip", flipBox.value); }
    if (sortKey !== "item" || sortDir !== 1) { params.set("sort", (sortDir < 0 ? "-" : "") + sortKey); }
    if (selected >= 0) { params.set("attempt", rows[selected][col.item] + ":" + rows[selected][col.k]); }
    var text = params.toString();
    window.history.replaceState(null, "", text ? "#" + text : window.location.pathname);
  }

  function readHash() {
    var params = new URLSearchParams(window.location.hash.slice(1));
    textBox.value = params.get("q") || "";
    outcomeBox.value = params.get("outcome") || "";
    groupBox.value = params.get("group") || "";
    if (flipBox) { flipBox.value = params.get("flip") || ""; }
    var sort = params.get("sort") || "item";
    sortDir = sort.charAt(0) === "-" ? -1 : 1;
    sortKey = sort.replace(/^-/, "");
    if (col[sortKey] === undefined) { sortKey = "item"; sortDir = 1; }
    applyFilters();
    var m = /^(.*):(\d+)$/.exec(params.get("attempt") || "");
    if (!m) { return; }
    var k = Number(m[2]);
    for (var i = 0; i < rows.length; i++) {
      if (rows[i][col.item] === m[1] && rows[i][col.k] === k) {
        showDetail(i);
        var pos = visible.indexOf(i);
        if (pos >= 0) { viewport.scrollTop = Math.max(0, (pos - 3) * ROW_H); render(); }
        detail.scrollIntoView({block: "nearest"});
        return;
      }
    }
  }
  window.addEventListener("hashchange", readHash);

  // -- wiring ---------------------------------------------------------------------------------

  document.querySelectorAll(".it-head button").forEach(function (b) {
    b.addEventListener("click", function () {
      var key = b.getAttribute("data-col");
      if (key === sortKey) { sortDir = -sortDir; } else { sortKey = key; sortDir = 1; }
      sortVisible();
      writeHash();
    });
  });
  var timer = null;
  textBox.addEventListener("input", function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(function () { applyFilters(); writeHash(); }, 150);
  });
  [outcomeBox, groupBox, flipBox].forEach(function (box) {
    if (box) { box.addEventListener("change", function () { applyFilters(); writeHash(); }); }
  });

  readHash();
  body.setAttribute("data-lsrb-rows-total", String(rows.length));
  // Time from the script's start to the first rendered table (read by bench/bench_report.py).
  body.setAttribute("data-lsrb-init-ms", (window.performance.now() - started).toFixed(1));
  body.setAttribute("data-lsrb-ready", "1");
}());
