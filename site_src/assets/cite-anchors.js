// A Cite line links to its answer as #answer-<machine model>--<workload>. A later build may
// quote another workload there, or tell two machines of one model apart: when the address's
// fragment names no element, go to the answer whose anchor is its longest prefix (cut at a
// "--", else at a "-"), so that a citation made before the rebuild still lands on that
// machine's answer (#answer-nvidia-h200--resnet50-train-b256-fp32-nchw → #answer-nvidia-h200).
// The rule is bench/report/render/words/answers.py's. No network, no library.
(function () {
  function known() {
    var found = document.querySelectorAll(".tk-answer[id], .tk-alias[id]");
    return Array.prototype.map.call(found, function (el) { return el.id; });
  }

  function resolve(fragment, ids) {
    var marks = ["--", "-"];
    for (var i = 0; i < marks.length; i++) {
      var best = "";
      ids.forEach(function (id) {
        if (id.length > best.length && fragment.indexOf(id + marks[i]) === 0) best = id;
      });
      if (best) return best;
    }
    return "";
  }

  function follow() {
    var fragment;
    try {
      fragment = decodeURIComponent(location.hash.slice(1));
    } catch (e) {
      return;
    }
    if (!fragment || document.getElementById(fragment)) return;
    var to = resolve(fragment, known());
    if (!to) return;
    history.replaceState(null, "", "#" + encodeURIComponent(to));
    document.getElementById(to).scrollIntoView();
  }

  window.addEventListener("hashchange", follow);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", follow);
  } else {
    follow();
  }
})();
