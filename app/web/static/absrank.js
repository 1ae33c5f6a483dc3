// The only script of the pages: a report whose tables are building asks again by itself.
(function () {
  "use strict";
  var form = document.getElementById("again");
  if (!form) { return; }
  var seconds = Number(form.getAttribute("data-again-after")) || 10;
  window.setTimeout(function () { form.submit(); }, seconds * 1000);
}());
