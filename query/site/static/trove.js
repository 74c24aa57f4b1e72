// Progressive enhancement only: every page works without this file.
// "/" moves the focus to the search box (unless one is typing in a field already).
document.addEventListener("keydown", function (event) {
  if (event.key !== "/" || event.ctrlKey || event.metaKey || event.altKey) return;
  var target = event.target;
  var tag = target && target.tagName ? target.tagName.toLowerCase() : "";
  if (tag === "input" || tag === "textarea" || tag === "select" || (target && target.isContentEditable)) return;
  var box = document.querySelector("input[data-focus-key='/']");
  if (!box) return;
  event.preventDefault();
  box.focus();
  box.select();
});
