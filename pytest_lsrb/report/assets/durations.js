// core/durations.py's `latency`, for the report's and `lsrb view`'s pages alike: 0.04 ms, 412 ms,
// 2.41 s, 3m34s, 1h03m.
var lsrbLatency = function (v) {
  "use strict";
  if (v === null || v === undefined) { return "–"; }
  if (v < 1) { return Number(v.toPrecision(2)) + " ms"; }
  if (v < 10) { return v.toFixed(1) + " ms"; }
  if (v < 1000) { return v.toFixed(0) + " ms"; }
  if (v < 60000) { return (v / 1000).toFixed(2) + " s"; }
  var s = Math.round(v / 1000);
  if (s < 3600) { return Math.floor(s / 60) + "m" + String(s % 60).padStart(2, "0") + "s"; }
  return Math.floor(s / 3600) + "h" + String(Math.floor((s % 3600) / 60)).padStart(2, "0") + "m";
};
