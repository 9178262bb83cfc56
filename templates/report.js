/* ragreport: optional enhancements (sorting, filtering, print). The page reads without it. */
(function () {
  "use strict";

  function cellKey(row, index) {
    var cell = row.cells[index];
    if (!cell) { return ""; }
    var raw = cell.getAttribute("data-sort");
    if (raw !== null && raw !== "" && !isNaN(Number(raw))) { return Number(raw); }
    return (cell.textContent || "").trim().toLowerCase();
  }

  function compare(a, b) {
    if (typeof a === "number" && typeof b === "number") { return a - b; }
    if (typeof a === "number") { return -1; }
    if (typeof b === "number") { return 1; }
    return a < b ? -1 : (a > b ? 1 : 0);
  }

  function makeSortable(table) {
    var head = table.tHead;
    var body = table.tBodies[0];
    if (!head || !body || head.rows.length !== 1) { return; }
    var original = Array.prototype.slice.call(body.rows);
    Array.prototype.forEach.call(head.rows[0].cells, function (th, index) {
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) { button.appendChild(th.firstChild); }
      th.appendChild(button);
      button.addEventListener("click", function () {
        var state = th.getAttribute("aria-sort");
        var next = state === "ascending" ? "descending" : (state === "descending" ? "none" : "ascending");
        Array.prototype.forEach.call(head.rows[0].cells, function (other) {
          other.removeAttribute("aria-sort");
        });
        var rows = original.slice();
        if (next !== "none") {
          th.setAttribute("aria-sort", next);
          var sign = next === "ascending" ? 1 : -1;
          rows = rows.map(function (row, i) { return [cellKey(row, index), i, row]; })
            .sort(function (x, y) { return sign * compare(x[0], y[0]) || x[1] - y[1]; })
            .map(function (x) { return x[2]; });
        }
        rows.forEach(function (row) { body.appendChild(row); });
      });
    });
  }

  function addFilter(slot) {
    var section = document.getElementById(slot.getAttribute("data-target") || "");
    if (!section) { return; }
    var items = Array.prototype.slice.call(section.querySelectorAll("details.query"));
    if (!items.length) { return; }
    var box = document.createElement("div");
    box.className = "filter";
    var label = document.createElement("label");
    label.textContent = "Filter queries ";
    var input = document.createElement("input");
    input.type = "search";
    input.placeholder = "id, text or failure kind";
    label.appendChild(input);
    var count = document.createElement("span");
    count.className = "note";
    var openAll = document.createElement("button");
    openAll.type = "button";
    openAll.textContent = "Expand all";
    var closeAll = document.createElement("button");
    closeAll.type = "button";
    closeAll.textContent = "Collapse all";
    box.appendChild(label);
    box.appendChild(openAll);
    box.appendChild(closeAll);
    box.appendChild(count);
    slot.appendChild(box);
    function update() {
      var needle = input.value.trim().toLowerCase();
      var shown = 0;
      items.forEach(function (item) {
        var summary = item.querySelector("summary");
        var text = (summary ? summary.textContent : "").toLowerCase();
        var match = !needle || text.indexOf(needle) !== -1;
        item.classList.toggle("hidden", !match);
        if (match) { shown += 1; }
      });
      count.textContent = shown + " of " + items.length + " shown";
    }
    input.addEventListener("input", update);
    openAll.addEventListener("click", function () {
      items.forEach(function (item) { if (!item.classList.contains("hidden")) { item.open = true; } });
    });
    closeAll.addEventListener("click", function () {
      items.forEach(function (item) { item.open = false; });
    });
    update();
  }

  var reopened = [];
  window.addEventListener("beforeprint", function () {
    reopened = Array.prototype.filter.call(document.querySelectorAll("details"), function (d) {
      return !d.open;
    });
    reopened.forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () {
    reopened.forEach(function (d) { d.open = false; });
    reopened = [];
  });

  // the slice selector of the metric-vs-K curves (--slices): without JavaScript every
  // slice's plots are listed under the curves, folded
  function addSlicePicker(slot) {
    var box = document.getElementById(slot.getAttribute("data-target") || "");
    var all = document.getElementById("curves-all");
    if (!box || !all) { return; }
    var groups = Array.prototype.slice.call(box.querySelectorAll("details.slice-group"));
    if (!groups.length) { return; }
    var label = document.createElement("label");
    label.className = "slice-picker";
    label.appendChild(document.createTextNode("Queries: "));
    var select = document.createElement("select");
    select.id = "slice-select";
    var first = document.createElement("option");
    first.value = "";
    first.textContent = "all queries";
    select.appendChild(first);
    groups.forEach(function (g) {
      var option = document.createElement("option");
      option.value = g.getAttribute("data-slice");
      option.textContent = "slice " + (g.getAttribute("data-name") || "");
      select.appendChild(option);
    });
    label.appendChild(select);
    slot.appendChild(label);
    var note = box.querySelector(".slice-curves-note");
    function show() {
      var chosen = select.value;
      all.hidden = chosen !== "";
      if (note) { note.hidden = true; }
      groups.forEach(function (g) {
        var on = g.getAttribute("data-slice") === chosen;
        g.hidden = !on;
        if (on) { g.open = true; }
      });
    }
    select.addEventListener("change", show);
    show();
  }

  Array.prototype.forEach.call(document.querySelectorAll(".slice-picker-slot"), addSlicePicker);
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), makeSortable);
  Array.prototype.forEach.call(document.querySelectorAll(".filter-slot"), addFilter);
}());
