#pragma once
// The style of every HTML report (the comparison's and the single run's): one place for it.

namespace recompdiag::reports::detail {

inline constexpr const char* kHtmlStyle = R"(
body{font:15px/1.45 -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;color:#1d2330;margin:0;background:#f5f6f8}
main{max-width:1160px;margin:0 auto;padding:20px 24px 48px}
h1{margin:0 0 6px;font-size:30px}
h2{font-size:19px;margin:30px 0 10px;border-bottom:1px solid #d9dde3;padding-bottom:4px}
h3{font-size:15px;margin:14px 0 6px}
.verdict{border-radius:8px;padding:18px 22px;color:#fff}
.verdict p{margin:4px 0}
.regression{background:#b3261e}.improvement{background:#1e7b34}.no_change{background:#44546a}
.inconclusive{background:#6b5a2e}
.gate{font-size:15px;opacity:.95;margin:0 0 8px}
table.questions{width:100%;font-size:15px;margin:12px 0}
table.questions td{white-space:normal;vertical-align:top}
td.v-no_change{color:#1d2330;font-weight:600}td.v-open{color:#7a4b00;font-weight:600}
.runs{opacity:.92;font-size:14px}
.story{margin:6px 0 10px;padding-left:20px;font-size:16px}
.story li{margin:3px 0}
table{border-collapse:collapse;background:#fff;margin:6px 0;font-size:14px}
th,td{border:1px solid #d9dde3;padding:4px 9px;text-align:right;white-space:nowrap}
td.l{white-space:normal}
th{background:#eef0f4;white-space:normal;vertical-align:bottom}
td.l,th.l{text-align:left}
td.v-regression{color:#b3261e;font-weight:600}td.v-improvement{color:#1e7b34;font-weight:600}
.chart{background:#fff;border:1px solid #d9dde3;border-radius:6px;padding:6px;margin:6px 0}
.legend{font-size:13px;color:#4a5363;margin:2px 0 0}
.sw{display:inline-block;width:22px;height:10px;margin:0 5px 0 12px;vertical-align:middle}
ul{margin:4px 0;padding-left:22px}
li{margin:3px 0}
.warn li{color:#7a4b00}
.muted{color:#5b6473}
pre{background:#fff;border:1px solid #d9dde3;padding:10px;overflow:auto;font-size:12px;max-height:420px}
svg text{font:12px -apple-system,"Segoe UI",Helvetica,Arial,sans-serif;fill:#3b4352}
)";

}  // namespace recompdiag::reports::detail
