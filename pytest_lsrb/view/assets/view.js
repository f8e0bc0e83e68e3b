// lsrb view: draws a run's page from its state (JSON) and asks for it again while the run goes on.
// Every value comes from a run (model output included) and reaches the DOM through textContent.
(function () {
  "use strict";
  var body = document.body;
  var source = document.getElementById("lsrb-state");
  if (!source) { return; }
  var state = JSON.parse(source.textContent);
  var name = state.name;
  var POLL_MS = 2000;
  var polls = 0;
  var seen = [];  // attempts counted at each drawing (tests read it: the page followed the run)

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }

  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } }

  function pct(v) { return (v === null || v === undefined) ? "–" : (v * 100).toFixed(1) + "%"; }

  function card(box, label, value, note) {
    var c = el("div", "card");
    c.appendChild(el("div", "l", label));
    c.appendChild(el("div", "v", value));
    if (note) { c.appendChild(el("div", "note", note)); }
    box.appendChild(c);
  }

  function draw(s) {
    var h = s.headline;
    var status = document.getElementById("status");
    status.textContent = s.running ? "running" : (s.finished ? "finished" : "stopped");
    status.className = s.running ? "running" : "";
    var cards = document.getElementById("cards");
    clear(cards);
    var expected = h.expected === null || h.expected === undefined ? "?" : h.expected;
    card(cards, "attempts", h.attempts + "/" + expected, s.suite + " · " + s.model);
    card(cards, "success (running score)", pct(h.success_rate), "of " + h.judged + " judged");
    card(cards, "tokens in / out", h.prompt_tokens.toLocaleString() + " / " + h.completion_tokens.toLocaleString());
    var errors = Object.keys(h.generation_errors).map(function (k) { return k + " " + h.generation_errors[k]; });
    card(cards, "generation errors", errors.length ? errors.join(", ") : "none", "no usable answer from the endpoint");
    card(cards, "unreadable answers", String(h.unreadable), "the model's: empty, or no answer found");
    s.metrics.forEach(function (m) {
      // (the cards above say these already)
      var said = ["attempts", "items", "success", "generation errors", "unreadable answers"];
      if (said.indexOf(m.label) < 0) { card(cards, m.label, m.value); }
    });

    var flight = document.getElementById("in-flight");
    clear(flight);
    if (!s.in_flight.length) {
      flight.appendChild(el("p", "note", s.running ? "no attempt of several calls in flight" : "nothing in flight"));
    }
    s.in_flight.forEach(function (a) {
      var line = a.item_id + "#s" + a.sample_index + "  " + a.calls + "/" + a.budget + " calls";
      if (a.best !== null && a.best !== undefined) { line += "  best " + a.best_label + " " + Number(a.best.toPrecision(3)); }
      line += "  " + a.elapsed + "  tokens " + a.prompt_tokens + " / " + a.completion_tokens;
      flight.appendChild(el("div", "flight", line));
    });

    var col = {};
    s.columns.forEach(function (c, i) { col[c] = i; });
    var tbody = document.querySelector("#attempts tbody");
    clear(tbody);
    var rows = s.rows.slice().reverse();  // newest first
    rows.forEach(function (r) {
      var tr = el("tr");
      tr.appendChild(el("td", "mono", r[col.item]));
      tr.appendChild(el("td", null, "s" + r[col.k]));
      var out = el("td");
      out.appendChild(el("span", "badge b-" + r[col.outcome], r[col.outcome]));
      tr.appendChild(out);
      tr.appendChild(el("td", "answer", r[col.answer]));
      tr.appendChild(el("td", null, r[col.verdict]));
      tr.appendChild(el("td", "num", lsrbLatency(r[col.latency])));
      tr.appendChild(el("td", "num", r[col.tokens] === null ? "–" : r[col.tokens]));
      tbody.appendChild(tr);
    });
    var shown = s.rows.length < s.rows_total ? " (the newest " + s.rows.length + ")" : "";
    document.getElementById("count").textContent = s.rows_total + " attempts" + shown;
    seen.push(h.attempts);
    body.setAttribute("data-lsrb-seen", seen.join(","));
    body.setAttribute("data-lsrb-status", status.textContent);
  }

  function poll() {
    polls += 1;
    body.setAttribute("data-lsrb-polls", String(polls));
    fetch("/api/run?name=" + encodeURIComponent(name), { cache: "no-store" })
      .then(function (resp) { return resp.ok ? resp.json() : null; })
      .then(function (next) {
        if (next) { state = next; draw(state); }
        if (!next || next.running || !next.finished) { window.setTimeout(poll, POLL_MS); }
      })
      .catch(function () { window.setTimeout(poll, POLL_MS * 2); });
  }

  draw(state);
  body.setAttribute("data-lsrb-ready", "1");
  if (state.running || !state.finished) { window.setTimeout(poll, POLL_MS); }
}());
