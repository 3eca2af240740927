// rankflavor report: sortable tables and the per-query charts. Data comes only from the JSON block
// (#report-data) and reaches the page through textContent or Plotly (with <, > and & as entities).
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var config = { displaylogo: false, responsive: true };

  function plotlyText(s) { return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
  function fmt(x, signed) { return x === null || x === undefined ? "–" : (signed && x > 0 ? "+" : "") + x.toFixed(4); }
  function option(select, value, text) { var o = document.createElement("option"); o.value = value; o.textContent = text; select.appendChild(o); }
  // A flavor string that wraps only at its commas.
  function flavorInto(el, flavor) {
    while (el.firstChild) { el.removeChild(el.firstChild); }
    flavor.split(",").forEach(function (part, i, parts) {
      el.appendChild(document.createTextNode(part + (i < parts.length - 1 ? "," : "")));
      if (i < parts.length - 1) { el.appendChild(document.createElement("wbr")); }
    });
  }
  function cell(tr, text, cls) { var td = document.createElement("td"); td.textContent = text; if (cls) { td.className = cls; } tr.appendChild(td); }

  // Sortable tables: numbers by data-sort, text otherwise; missing values sort last.
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (table) {
    var heads = table.tHead.rows[0].cells;
    Array.prototype.forEach.call(heads, function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var numeric = th.getAttribute("data-type") === "num";
        var rows = Array.prototype.slice.call(table.tBodies[0].rows);
        rows.sort(function (r1, r2) {
          var a = r1.cells[col].getAttribute("data-sort"), b = r2.cells[col].getAttribute("data-sort");
          if (numeric) {
            if (a === "" || b === "") { return (a === "") - (b === ""); }
            return asc ? a - b : b - a;
          }
          return asc ? a.localeCompare(b) : b.localeCompare(a);
        });
        rows.forEach(function (r) { table.tBodies[0].appendChild(r); });
      });
    });
  });

  // Spread charts (figures built by the report's Python side).
  data.spread_figures.forEach(function (fig, i) {
    Plotly.newPlot("spread-chart-" + i, fig.data, fig.layout, config);
  });
  data.pair_figures.forEach(function (fig, i) {
    if (fig) { Plotly.newPlot("pair-chart-" + i, fig.data, fig.layout, config); }
  });

  // Per query: B - A for one flavor, sorted; the worst and best queries named.
  var pq = data.per_query;
  if (!pq.length) { return; }
  var selM = document.getElementById("pq-measure"), selA = document.getElementById("pq-a"), selB = document.getElementById("pq-b");
  pq.forEach(function (m, i) { option(selM, i, m.name + " [" + (i + 1) + "]"); });

  function fillSystems() {
    var m = pq[+selM.value];
    [selA, selB].forEach(function (s) { while (s.firstChild) { s.removeChild(s.firstChild); } });
    m.systems.forEach(function (name, i) { option(selA, i, name); option(selB, i, name); });
    selB.value = m.systems.length > 1 ? 1 : 0;
  }

  function listRows(tbody, items, m, a, b, single) {
    while (tbody.firstChild) { tbody.removeChild(tbody.firstChild); }
    items.forEach(function (it) {
      var tr = document.createElement("tr");
      cell(tr, m.queries[it.q], "query");
      cell(tr, fmt(m.values[a][it.q]), "num");
      cell(tr, single ? "" : fmt(m.values[b][it.q]), "num");
      cell(tr, single ? "" : fmt(it.d, true), "num");
      tbody.appendChild(tr);
    });
  }

  function draw() {
    var m = pq[+selM.value], a = +selA.value, b = +selB.value, single = a === b;
    flavorInto(document.getElementById("pq-flavor"), m.flavor);
    var items = [];
    for (var q = 0; q < m.queries.length; q++) {
      var va = m.values[a][q], vb = m.values[b][q];
      if (va === null || vb === null) { continue; }
      items.push({ q: q, d: single ? va : vb - va });
    }
    items.sort(function (x, y) { return x.d - y.d || (m.queries[x.q] < m.queries[y.q] ? -1 : 1); });
    var nameA = m.systems[a], nameB = m.systems[b];
    var what = single ? "per-query value of " + nameA : nameB + " − " + nameA;
    document.getElementById("pq-caption").textContent = items.length + " queries with a value in " +
      (single ? nameA : "both") + "; bars sorted by " + what + ".";
    ["worst", "best"].forEach(function (k) {
      document.getElementById("pq-" + k + "-a").textContent = nameA;
      document.getElementById("pq-" + k + "-b").textContent = single ? "" : nameB;
      document.getElementById("pq-" + k + "-caption").textContent = (k === "worst" ? "worst" : "best") + " queries (" + what + ")";
    });
    var n = Math.min(10, items.length);
    listRows(document.querySelector("#pq-worst tbody"), items.slice(0, n), m, a, b, single);
    listRows(document.querySelector("#pq-best tbody"), items.slice(items.length - n).reverse(), m, a, b, single);
    var custom = items.map(function (it) {
      return [plotlyText(m.queries[it.q]), m.values[a][it.q], single ? null : m.values[b][it.q]];
    });
    var hover = "query %{customdata[0]}<br>" + plotlyText(nameA) + ": %{customdata[1]:.4f}" +
      (single ? "" : "<br>" + plotlyText(nameB) + ": %{customdata[2]:.4f}<br>B − A: %{y:+.4f}") + "<extra></extra>";
    Plotly.react("pq-delta", [{
      type: "bar", x: items.map(function (_, i) { return i + 1; }), y: items.map(function (it) { return it.d; }),
      customdata: custom, hovertemplate: hover,
      marker: { color: items.map(function (it) { return it.d < 0 ? "#d62728" : "#1f77b4"; }) }
    }], {
      title: { text: plotlyText(what) + " per query, sorted", font: { size: 14 } }, height: 320,
      margin: { l: 55, r: 20, t: 45, b: 40 }, bargap: 0, xaxis: { title: { text: "queries, sorted" } },
      yaxis: { title: { text: single ? "value" : "difference" } }
    }, config);
    Plotly.react("pq-values", m.systems.map(function (name, s) {
      return { type: "box", name: plotlyText(name), y: m.values[s], boxmean: true, hoverinfo: "y" };
    }), {
      title: { text: "per-query values by system", font: { size: 14 } }, height: 300, showlegend: false,
      margin: { l: 55, r: 20, t: 45, b: 40 }, yaxis: { title: { text: m.name } }
    }, config);
  }

  selM.addEventListener("change", function () { fillSystems(); draw(); });
  selA.addEventListener("change", draw);
  selB.addEventListener("change", draw);
  fillSystems();
  draw();
}());
