/* vtrace report: the page's script (inlined into the page by vtrace report). It reads
 * the JSON of <script id="vt-data">, builds the tables and draws the timeline on a
 * canvas. When done, <body data-vt-status> is "ok"; any error is written into
 * #vt-errors and makes it "error" (the tests read both from the DOM). No library, no
 * network. */
(function () {
    'use strict';

    var failed = false;
    function fail(msg) {
        failed = true;
        document.body.setAttribute('data-vt-status', 'error');
        var box = document.getElementById('vt-errors');
        var p = document.createElement('pre');
        p.className = 'vt-error';
        p.textContent = 'Error in the report page: ' + msg;
        box.appendChild(p);
    }
    window.addEventListener('error', function (e) {
        fail((e.message || 'error') + (e.lineno ? ' (line ' + e.lineno + ')' : ''));
    });

    /* ---------------------------------------------------------------- helpers */

    function el(tag, attrs, kids) {
        var e = document.createElement(tag);
        if (attrs)
            for (var k in attrs) {
                if (k === 'text') e.textContent = attrs[k];
                else if (k === 'cls') e.className = attrs[k];
                else e.setAttribute(k, attrs[k]);
            }
        if (kids)
            for (var i = 0; i < kids.length; i++)
                if (kids[i] !== null && kids[i] !== undefined)
                    e.appendChild(typeof kids[i] === 'string' ? document.createTextNode(kids[i]) : kids[i]);
        return e;
    }

    function fmtNs(ns) {
        var a = Math.abs(ns);
        if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 2 : 3) + ' s';
        if (a >= 1e6) return (ns / 1e6).toFixed(a >= 1e7 ? 2 : 3) + ' ms';
        if (a >= 1e3) return (ns / 1e3).toFixed(a >= 1e4 ? 2 : 3) + ' us';
        return Math.round(ns) + ' ns';
    }
    function fmtPct(x) { return (100 * x).toFixed(2) + '%'; }
    function fmtInt(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ','); }

    /* The overlays have colours no function gets: the critical path near-black, the
     * domino path violet, computation pale yellow; hashed colours avoid red and violet. */
    var PATH = '#16181d', DOMINO = '#7b2ff7', COMPUTATION = '#f3e7b3', DETAIL = '#2f9e5b', OTHER = '#a3a8b3';
    function color(i, names) {
        var name = i >= 0 ? names[i] : '';
        if (/^MPI_(Wait|Test)/.test(name)) return 'hsl(0, 62%, 62%)';
        if (/^MPI_(All|Bcast|Reduce|Gather|Scatter|Barrier|Alltoall|Scan|Exscan|Reduce_scatter|Ibarrier|Ibcast|Iall|Ireduce|Igather|Iscatter|Ialltoall|Neighbor)/.test(name)) {
            var h = 200 + (hash(name) % 60);
            return 'hsl(' + h + ', 55%, 55%)';
        }
        if (/^MPI_(I?[sbr]?send|Send|Isend|Ssend|Bsend|Rsend|Issend|Ibsend|Irsend)/.test(name)) return 'hsl(35, 85%, 55%)';
        if (/^MPI_(I?recv|Recv|Irecv|Mrecv|Imrecv|Probe|Iprobe|Mprobe|Improbe)/.test(name)) return 'hsl(130, 45%, 50%)';
        if (/^MPI_Sendrecv/.test(name)) return 'hsl(80, 50%, 50%)';
        if (/^MPI_Init/.test(name)) return 'hsl(0, 0%, 74%)';
        if (/^MPI_Finalize/.test(name)) return 'hsl(215, 14%, 44%)';
        if (/^MPI_File/.test(name)) return 'hsl(175, 45%, 42%)';
        return 'hsl(' + (25 + hash(name) % 235) + ', 45%, 60%)';
    }
    /* 'hsl(H, S%, L%)' as '#rrggbb': the canvas draws exactly these, and the tests look
     * for them in the screenshots (#vt-summary data-colors). */
    function hex(c) {
        var m = /^hsl\(([\d.]+), ([\d.]+)%, ([\d.]+)%\)$/.exec(c);
        if (!m) return c;
        var h = +m[1] / 360, sa = +m[2] / 100, l = +m[3] / 100;
        var q = l < 0.5 ? l * (1 + sa) : l + sa - l * sa, p = 2 * l - q;
        function ch(t) {
            if (t < 0) t += 1;
            if (t > 1) t -= 1;
            var v = t < 1 / 6 ? p + (q - p) * 6 * t : t < 1 / 2 ? q : t < 2 / 3 ? p + (q - p) * (2 / 3 - t) * 6 : p;
            return ('0' + Math.round(v * 255).toString(16)).slice(-2);
        }
        return '#' + ch(h + 1 / 3) + ch(h) + ch(h - 1 / 3);
    }
    function hash(s) {
        var h = 2166136261;
        for (var i = 0; i < s.length; i++) { h ^= s.charCodeAt(i); h = Math.imul(h, 16777619); }
        return h >>> 0;
    }

    function table(head, rows, numeric) {
        var t = el('table', { cls: 'vt-table' });
        var tr = el('tr');
        head.forEach(function (h) { tr.appendChild(el('th', { text: h })); });
        t.appendChild(el('thead', null, [tr]));
        var tb = el('tbody');
        rows.forEach(function (r) {
            var row = el('tr');
            r.cells.forEach(function (c, i) {
                var td = el('td', numeric && numeric[i] ? { cls: 'num' } : null);
                if (typeof c === 'string' || typeof c === 'number') td.textContent = String(c);
                else td.appendChild(c);
                row.appendChild(td);
            });
            if (r.cls) row.className = r.cls;
            if (r.onclick) { row.className += ' vt-click'; row.addEventListener('click', r.onclick); row.title = 'show on the timeline'; }
            tb.appendChild(row);
        });
        t.appendChild(tb);
        return t;
    }
    function bar(frac, cls) {
        return el('span', { cls: 'vt-bar' + (cls ? ' ' + cls : ''), style: 'width:' + Math.max(0, Math.min(1, frac)) * 120 + 'px' });
    }

    /* ---------------------------------------------------------------- the page */

    function main() {
        var D = JSON.parse(document.getElementById('vt-data').textContent);
        if (D.format !== 'vtrace-report') throw new Error('the embedded data is not a vtrace report');
        var app = document.getElementById('vt-app');
        var names = D.functions;
        document.title = 'vtrace report: ' + D.trace;

        app.appendChild(el('h1', { text: 'vtrace report: ' + D.trace }));
        app.appendChild(el('div', { cls: 'vt-meta', text:
            (D.kind === 'reduced' ? 'reduced trace' : 'full trace') + ', ' + D.nranks + ' ranks, duration ' +
            fmtNs(D.duration_ns) + (D.measured_ns >= 0 ? ', measured run time (model) ' + fmtNs(D.measured_ns) : '') +
            ', candidate threshold ' + fmtNs(D.threshold_ns) }));
        app.appendChild(el('div', { cls: 'vt-meta', text: D.trace_version + ', ' + D.mpi_version + '; page by ' + D.generator }));
        if (D.incomplete) app.appendChild(el('div', { cls: 'vt-note', text: 'The trace is incomplete: recording stopped early on some rank.' }));
        if (D.clock_violations > 0)
            app.appendChild(el('div', { cls: 'vt-note', text: D.clock_violations + ' receives end before their send started (clock condition); the analyses use the raw times.' }));
        if (!D.detail.complete)
            app.appendChild(el('div', { cls: 'vt-note', text: 'Embedded one by one: the ' + fmtInt(D.events.embedded) + ' calls of ' +
                fmtNs(D.detail.start) + ' to ' + fmtNs(D.detail.end) + ' (--max-events ' + D.max_events + ', --detail-from), and the messages that cross ' +
                'that window; the other ' + fmtInt(D.events.omitted) + ' calls are left out of the page and aggregated: bins of ' + fmtNs(D.bins.width) +
                ' per rank (time in MPI, calls, the function with the most time).' }));
        [['messages', 'messages', 'outside the detail window, or over --max-events'], ['markers', 'markers', 'the last'],
         ['aggregated', 'aggregated stretches', 'the shortest']].forEach(function (k) {
            var c = D[k[0]];
            if (c.omitted > 0)
                app.appendChild(el('div', { cls: 'vt-note', text: 'Embedded ' + fmtInt(c.embedded) + ' of ' + fmtInt(c.total) + ' ' + k[1] + ': ' +
                    fmtInt(c.omitted) + ' left out (' + k[2] + '; --max-events ' + D.max_events + ').' }));
        });
        if (D.critical_path.available && D.critical_path.segments.omitted > 0)
            app.appendChild(el('div', { cls: 'vt-note', text: 'Critical path: ' + D.critical_path.segments.omitted + ' of ' + D.critical_path.segments.total + ' segments left out (the shortest).' }));

        var tl = timeline(D, app);
        criticalPath(D, app, tl);
        fixFirst(D, app);
        domino(D, app, tl);
        whatif(D, app, tl);
        patterns(D, app);
        profile(D, app);

        var sum = el('div', { id: 'vt-summary', style: 'display:none' });
        sum.setAttribute('data-ranks', D.nranks);
        sum.setAttribute('data-events', D.events.data.length);
        sum.setAttribute('data-messages', D.messages.data.length);
        sum.setAttribute('data-markers', D.markers.data.length);
        sum.setAttribute('data-aggregated', D.aggregated.data.length);
        sum.setAttribute('data-drawn-events', tl.stats.events);
        sum.setAttribute('data-drawn-messages', tl.stats.messages);
        sum.setAttribute('data-drawn-aggregated', tl.stats.aggregated);
        sum.setAttribute('data-drawn-path', tl.stats.path);
        sum.setAttribute('data-drawn-domino', tl.stats.domino);
        sum.setAttribute('data-profile-rows', document.querySelectorAll('#vt-profile tbody tr').length);
        sum.setAttribute('data-domino-rows', D.domino.length);
        sum.setAttribute('data-whatif-rows', D.whatif.length);
        sum.setAttribute('data-drawn-computation', tl.stats.computation);
        sum.setAttribute('data-drawn-bins', tl.stats.bins);
        sum.setAttribute('data-drawn-columns', tl.stats.columns);
        sum.setAttribute('data-drawn-summed', tl.stats.summed);
        sum.setAttribute('data-detail', D.detail.complete ? 'complete' : D.detail.start + ',' + D.detail.end);
        sum.setAttribute('data-geometry', JSON.stringify(tl.geometry));
        sum.setAttribute('data-colors', JSON.stringify(tl.colors));
        sum.setAttribute('data-fix-rank-rows', D.fix_first ? D.fix_first.rank.length : 0);
        sum.setAttribute('data-fix-function-rows', D.fix_first ? D.fix_first.function.length : 0);
        sum.setAttribute('data-fix-first-rank', D.fix_first && D.fix_first.rank.length ? D.fix_first.rank[0].what : '');
        sum.setAttribute('data-fix-balance-gain', D.fix_first && D.fix_first.balance && document.getElementById('vt-fix-balance') ?
            D.fix_first.balance.gain_ns : '');
        sum.setAttribute('data-range-rows', document.querySelectorAll('#vt-range-table tbody tr').length);
        sum.setAttribute('data-pattern-rows', document.querySelectorAll('#vt-patterns tbody tr').length);
        app.appendChild(sum);
        if (!failed) document.body.setAttribute('data-vt-status', 'ok');
    }

    /* ---------------------------------------------------------------- timeline */

    function timeline(D, app) {
        var names = D.functions, nr = D.nranks;
        app.appendChild(el('h2', { text: 'Timeline' }));
        var opts = { messages: true, path: true, domino: true, markers: true };
        var bar_ = el('div', { cls: 'vt-toolbar' });
        function toggle(key, label) {
            var cb = el('input', { type: 'checkbox' });
            cb.checked = true;
            cb.addEventListener('change', function () { opts[key] = cb.checked; schedule(); });
            bar_.appendChild(el('label', null, [cb, ' ' + label]));
        }
        toggle('messages', 'messages');
        toggle('path', 'critical path');
        toggle('domino', 'domino path');
        toggle('markers', 'markers');
        var reset = el('button', { text: 'reset zoom' });
        bar_.appendChild(reset);
        var rangeBtn = el('button', { text: 'statistics of the view' });
        bar_.appendChild(rangeBtn);
        bar_.appendChild(el('span', { cls: 'vt-hint', text: 'wheel: zoom, drag: pan, shift+drag: statistics of a range, double-click: reset, hover: details' }));
        app.appendChild(bar_);

        var lod = el('div', { id: 'vt-lod', cls: 'vt-hint' });
        app.appendChild(lod);
        var box = el('div', { id: 'vt-timeline-box' });
        var cv = el('canvas', { id: 'vt-timeline' });
        var tip = el('div', { id: 'vt-tooltip' });
        box.appendChild(cv);
        box.appendChild(tip);
        app.appendChild(box);

        /* per rank: calls of the detail window, aggregated stretches, markers sorted by
         * start; the bins of the whole run (D.bins: index, ns in calls, calls, dominant
         * function, its ns, ns aggregated) */
        var lanes = [];
        for (var r = 0; r < nr; r++) lanes.push({ ev: [], agg: [], mk: [], bins: [], maxDur: 0, maxAgg: 0 });
        var fnTime = {};
        D.events.data.forEach(function (e) {
            var L = lanes[e[0]];
            if (!L) return;
            L.ev.push(e);
            if (e[2] > L.maxDur) L.maxDur = e[2];
        });
        D.aggregated.data.forEach(function (a) {
            var L = lanes[a[0]];
            if (!L) return;
            L.agg.push(a);
            if (a[2] > L.maxAgg) L.maxAgg = a[2];
        });
        D.markers.data.forEach(function (m) { if (lanes[m[0]]) lanes[m[0]].mk.push(m); });
        var BW = D.bins.width, BO = D.bins.origin;
        D.bins.ranks.forEach(function (flat, r) {
            var L = lanes[r];
            if (!L) return;
            for (var i = 0; i + 5 < flat.length; i += 6) {
                /* [start, mpi, calls, fn, fn_ns, agg]: start in ns like the calls' */
                L.bins.push([BO + flat[i] * BW, flat[i + 1], flat[i + 2], flat[i + 3], flat[i + 4], flat[i + 5]]);
                if (flat[i + 3] >= -1 && flat[i + 4] > 0) fnTime[flat[i + 3]] = (fnTime[flat[i + 3]] || 0) + flat[i + 4];
            }
        });
        lanes.forEach(function (L) {
            L.ev.sort(function (a, b) { return a[1] - b[1]; });
            L.agg.sort(function (a, b) { return a[1] - b[1]; });
        });
        /* the window whose every call is embedded; outside it, the bins */
        var DW0 = D.detail.complete ? -Infinity : D.detail.start, DW1 = D.detail.complete ? Infinity : D.detail.end;
        var colors = names.map(function (n, i) { return hex(color(i, names)); });
        var segs = D.critical_path.available ? D.critical_path.segments.data : [];
        var edges = D.critical_path.available ? D.critical_path.edges.data : [];
        var dom = D.domino.filter(function (d) { return d.start !== undefined; });

        /* legend: the functions with the most time on the timeline */
        var evTime = {};
        D.events.data.forEach(function (e) { evTime[e[3]] = (evTime[e[3]] || 0) + e[2]; });
        var order = Object.keys(fnTime).map(Number).sort(function (a, b) { return fnTime[b] - fnTime[a]; });
        Object.keys(evTime).map(Number).sort(function (a, b) { return evTime[b] - evTime[a]; }).forEach(function (i) {
            if (!(i in fnTime)) order.push(i);
        });
        var leg = el('div', { cls: 'vt-legend' });
        order.slice(0, 16).forEach(function (i) {
            leg.appendChild(el('span', null, [el('span', { cls: 'sw', style: 'background:' + (i >= 0 ? colors[i] : '#999') }), i >= 0 ? names[i] : '?']));
        });
        if (D.kind === 'reduced') leg.appendChild(el('span', null, [el('span', { cls: 'sw', style: 'background:#c9ccd3' }), 'aggregated (merged events)']));
        leg.appendChild(el('span', null, [el('span', { cls: 'sw', style: 'background:' + COMPUTATION }),
            'computation']));
        if (!D.detail.complete)
            leg.appendChild(el('span', null, [el('span', { cls: 'sw', style: 'background:' + DETAIL }),
                'calls one by one (outside: bins of ' + fmtNs(BW) + ', the dominant function\'s colour, as high as the share of time in MPI)']));
        leg.appendChild(el('span', null, [el('span', { cls: 'sw', style: 'background:' + OTHER }), 'other MPI calls (summed)']));
        leg.appendChild(el('span', null, [el('span', { cls: 'sw', style: 'background:' + PATH }), 'critical path']));
        leg.appendChild(el('span', null, [el('span', { cls: 'sw', style: 'background:' + DOMINO }), 'domino path']));
        leg.appendChild(el('span', null, [el('span', { cls: 'sw', style: 'background:#36a' }), 'message']));
        app.appendChild(leg);

        var LABEL = 110, AXIS = 22;
        var laneH = Math.max(8, Math.min(34, Math.floor(560 / Math.max(1, nr))));
        var lh = el('input', { type: 'range', min: 4, max: 80, value: laneH, id: 'vt-lane-height' });
        lh.addEventListener('input', function () { laneH = +lh.value; H = AXIS + nr * laneH + 8; size(); schedule(); });
        bar_.insertBefore(el('label', null, ['lane height ', lh]), bar_.lastChild);
        var full0 = 0, full1 = Math.max(D.duration_ns, 1);
        full1 += (full1 - full0) * 0.01;
        var v0 = full0, v1 = full1;
        var W = 0, H = AXIS + nr * laneH + 8, dpr = window.devicePixelRatio || 1;
        var ctx = cv.getContext('2d');
        var hatch = null;
        var stats = { events: 0, messages: 0, aggregated: 0, path: 0, domino: 0, computation: 0, bins: 0, columns: 0, summed: 0 };
        var sel = null;   /* shift+drag: {a, b} in ns */

        function size() {
            W = Math.max(400, box.clientWidth || 1200);
            cv.width = Math.round(W * dpr);
            cv.height = Math.round(H * dpr);
            cv.style.width = W + 'px';
            cv.style.height = H + 'px';
            ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
        }
        function X(t) { return LABEL + (t - v0) / (v1 - v0) * (W - LABEL - 8); }
        function T(x) { return v0 + (x - LABEL) / (W - LABEL - 8) * (v1 - v0); }
        function laneY(r) { return AXIS + r * laneH; }
        function lowerBound(arr, t) {   /* first index with start >= t */
            var lo = 0, hi = arr.length;
            while (lo < hi) { var mid = (lo + hi) >> 1; if (arr[mid][1] < t) lo = mid + 1; else hi = mid; }
            return lo;
        }

        function lowerBin(arr, t) {   /* last index with start <= t, -1 none */
            var lo = 0, hi = arr.length;
            while (lo < hi) { var mid = (lo + hi) >> 1; if (arr[mid][0] <= t) lo = mid + 1; else hi = mid; }
            return lo - 1;
        }
        function niceStep(span, px) {
            var raw = span / Math.max(1, px / 110), p = Math.pow(10, Math.floor(Math.log10(raw)));
            var m = raw / p;
            return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
        }

        /* One pixel column of the lane being drawn: what narrower than a pixel falls in
         * it, summed (ns in calls per function, ns aggregated), drawn from the bottom as
         * high as its share of the column's time, in the colour of the function with the
         * most time (over the computation colour: the rest of the column), the aggregated
         * share hatched above it. */
        var col = { px: -1, mpi: 0, agg: 0, fns: {}, y: 0, h: 0 }, pxns = 1;
        function colFlush(s) {
            if (col.px < 0) return;
            var hm = col.mpi > 0 ? Math.max(2, Math.round(col.h * Math.min(1, col.mpi / pxns))) : 0;
            var ha = col.agg > 0 ? Math.max(1, Math.round(col.h * Math.min(1, col.agg / pxns))) : 0;
            if (hm + ha > col.h) ha = col.h - hm;
            if (hm > 0) {
                var best = null, bns = -1;
                for (var f in col.fns) if (col.fns[f] > bns) { bns = col.fns[f]; best = +f; }
                ctx.fillStyle = best >= 0 ? colors[best] : best === -2 ? OTHER : '#999';
                ctx.fillRect(col.px, col.y + col.h - hm, 1, hm);
            }
            if (ha > 0) {
                ctx.fillStyle = hatch || '#d5d8de';
                ctx.fillRect(col.px, col.y + col.h - hm - ha, 1, ha);
            }
            s.columns++;
            col.px = -1; col.mpi = 0; col.agg = 0; col.fns = {};
        }
        function colAdd(s, x, fn, ns, agg) {
            var px = Math.max(LABEL, Math.floor(x));
            if (px !== col.px) { colFlush(s); col.px = px; }
            if (agg) col.agg += ns;
            else { col.mpi += ns; col.fns[fn] = (col.fns[fn] || 0) + ns; }
        }
        /* The part [a, b) of bin BN (outside the detail window): a block as wide as it
         * when a pixel or more, else into the pixel columns. */
        function drawBin(s, bn, a, b) {
            if (b <= a || b < v0 || a > v1) return;
            var f = (b - a) / BW, x0 = X(a), x1 = X(b);
            if (x1 - x0 < 1) {
                if (bn[1] > 0) {
                    colAdd(s, x0, bn[3], bn[4] * f, false);
                    if (bn[1] > bn[4]) colAdd(s, x0, -2, (bn[1] - bn[4]) * f, false);
                }
                if (bn[5] > 0) colAdd(s, x0, -1, bn[5] * f, true);
                s.bins++;
                return;
            }
            colFlush(s);
            var r0 = Math.max(LABEL, Math.round(x0)), r1 = Math.max(r0 + 1, Math.round(x1));
            var hm = bn[1] > 0 ? Math.max(2, Math.round(col.h * Math.min(1, bn[1] / BW))) : 0;
            var ha = bn[5] > 0 ? Math.max(1, Math.round(col.h * Math.min(1, bn[5] / BW))) : 0;
            if (hm + ha > col.h) ha = col.h - hm;
            if (hm > 0) {
                ctx.fillStyle = bn[3] >= 0 ? colors[bn[3]] : '#999';
                ctx.fillRect(r0, col.y + col.h - hm, r1 - r0, hm);
            }
            if (ha > 0) {
                ctx.fillStyle = hatch || '#d5d8de';
                ctx.fillRect(r0, col.y + col.h - hm - ha, r1 - r0, ha);
            }
            s.bins++;
        }

        function draw() {
            var s = { events: 0, messages: 0, aggregated: 0, path: 0, domino: 0, computation: 0, bins: 0, columns: 0, summed: 0 };
            pxns = (v1 - v0) / (W - LABEL - 8);
            ctx.clearRect(0, 0, W, H);
            ctx.font = '11px system-ui, sans-serif';
            ctx.textBaseline = 'middle';
            /* lanes */
            for (var r = 0; r < nr; r++) {
                ctx.fillStyle = r % 2 ? '#f7f8fa' : '#ffffff';
                ctx.fillRect(0, laneY(r), W, laneH);
            }
            /* axis */
            var st = niceStep(v1 - v0, W - LABEL);
            ctx.fillStyle = '#4a5263';
            ctx.strokeStyle = '#e3e6eb';
            ctx.lineWidth = 1;
            for (var t = Math.ceil(v0 / st) * st; t <= v1; t += st) {
                var x = Math.round(X(t)) + 0.5;
                if (x < LABEL) continue;
                ctx.beginPath(); ctx.moveTo(x, AXIS - 4); ctx.lineTo(x, H); ctx.stroke();
                ctx.fillText(fmtNs(t), x + 3, 10);
            }
            ctx.save();
            ctx.beginPath(); ctx.rect(LABEL, 0, W - LABEL, H); ctx.clip();
            /* the detail window: a green band under the axis */
            if (!D.detail.complete && DW1 > DW0 && DW1 >= v0 && DW0 <= v1) {
                ctx.fillStyle = DETAIL;
                var dx0 = Math.max(LABEL, Math.round(X(DW0)));
                ctx.fillRect(dx0, AXIS - 4, Math.max(2, Math.round(X(DW1)) - dx0), 3);
            }
            var pad = laneH > 12 ? 3 : 1;
            for (r = 0; r < nr; r++) {
                var L = lanes[r], y = laneY(r) + pad, h = laneH - 2 * pad;
                /* computation: the rank's run, under its calls */
                var sp = D.spans && D.spans[r];
                if (sp && sp[1] > sp[0] && sp[1] >= v0 && sp[0] <= v1) {
                    var cx0 = Math.max(X(sp[0]), LABEL), cx1 = X(sp[1]);
                    ctx.fillStyle = COMPUTATION;
                    ctx.fillRect(cx0, y, Math.max(1, cx1 - cx0), h);
                    s.computation++;
                }
                /* Level of detail: a call or an aggregated stretch a pixel wide or more is
                 * drawn as itself; narrower ones are summed per pixel column. Outside the
                 * detail window the bins stand for the calls. */
                col.y = y; col.h = h;
                var i = Math.max(0, lowerBin(L.bins, v0));
                for (; i < L.bins.length && L.bins[i][0] <= v1; i++) {
                    var bn = L.bins[i], bs = bn[0], be = bs + BW;
                    drawBin(s, bn, bs, Math.min(be, DW0));
                    drawBin(s, bn, Math.max(bs, DW1), be);
                }
                colFlush(s);
                /* the window: aggregated stretches of a reduced trace and calls, by start */
                var ia = lowerBound(L.agg, Math.max(v0, DW0) - L.maxAgg), ie = lowerBound(L.ev, v0 - L.maxDur), last = -1e9;
                for (;;) {
                    var na = ia < L.agg.length && L.agg[ia][1] <= v1 ? L.agg[ia] : null;
                    var ne = ie < L.ev.length && L.ev[ie][1] <= v1 ? L.ev[ie] : null;
                    if (!na && !ne) break;
                    if (na && (!ne || na[1] <= ne[1])) {
                        ia++;
                        if (na[1] + na[2] < DW0 || na[1] >= DW1) continue;
                        var x0 = X(na[1]), x1 = X(na[1] + na[2]);
                        if (x1 < LABEL) continue;
                        s.aggregated++;
                        if (x1 - x0 < 1) { colAdd(s, x0, -1, na[2], true); continue; }
                        colFlush(s);
                        ctx.fillStyle = hatch || '#d5d8de';
                        ctx.fillRect(Math.round(x0), y, Math.max(1, Math.round(x1) - Math.round(x0)), h);
                        if (x1 - x0 > 70 && h >= 10) {
                            ctx.fillStyle = '#505766';
                            var lbl = 'aggregated (' + na[3] + ')';
                            if (ctx.measureText(lbl).width > x1 - x0 - 6) lbl = 'aggregated';
                            ctx.fillText(lbl, Math.max(x0, LABEL) + 3, y + h / 2);
                        }
                        continue;
                    }
                    ie++;
                    var e = ne;
                    var ex0 = X(e[1]), ex1 = X(e[1] + e[2]);
                    if (ex1 < LABEL) continue;
                    if (ex1 - ex0 < 1) { colAdd(s, ex0, e[3], e[2], false); s.summed++; continue; }
                    colFlush(s);
                    var px0 = Math.floor(ex0), px1 = Math.max(px0 + 1, Math.ceil(ex1));
                    if (px1 <= last) continue;
                    if (px0 < last) px0 = last;
                    ctx.fillStyle = e[3] >= 0 ? colors[e[3]] : '#999';
                    ctx.fillRect(px0, y, px1 - px0, h);
                    if (opts.path && (e[5] & 1) && px1 - px0 >= 3) {
                        ctx.strokeStyle = PATH; ctx.lineWidth = 1.5;
                        ctx.strokeRect(px0 + 0.75, y + 0.75, px1 - px0 - 1.5, h - 1.5);
                    }
                    if (px1 - px0 > 60 && h >= 10) {
                        ctx.fillStyle = '#1d2330';
                        var nm = e[3] >= 0 ? names[e[3]] : '?';
                        if (ctx.measureText(nm).width < px1 - px0 - 6) ctx.fillText(nm, Math.max(px0, LABEL) + 3, y + h / 2);
                    }
                    last = px1;
                    s.events++;
                }
                colFlush(s);
                /* iteration markers */
                if (opts.markers) {
                    for (i = 0; i < L.mk.length; i++) {
                        var m = L.mk[i];
                        if (m[1] < v0 || m[1] > v1) continue;
                        var mx = Math.round(X(m[1])) + 0.5;
                        ctx.strokeStyle = '#0a7d3b'; ctx.lineWidth = 1.5;
                        ctx.setLineDash([3, 2]);
                        ctx.beginPath(); ctx.moveTo(mx, laneY(r)); ctx.lineTo(mx, laneY(r) + laneH); ctx.stroke();
                        ctx.setLineDash([]);
                        if (laneH >= 14) {
                            ctx.fillStyle = '#0a7d3b';
                            ctx.fillText((m[2] === 1 ? 'it ' : 'marker ' + m[2] + ':') + m[3], mx + 3, laneY(r) + 6);
                        }
                    }
                }
            }
            /* critical path: a band on each segment, lines for the edges */
            if (opts.path) {
                ctx.fillStyle = PATH;
                segs.forEach(function (g) {
                    if (g[2] < v0 || g[1] > v1) return;
                    var x0 = X(g[1]), x1 = X(g[2]);
                    ctx.fillRect(x0, laneY(g[0]) + laneH - 3, Math.max(1.5, x1 - x0), 3);
                    s.path++;
                });
                ctx.strokeStyle = PATH; ctx.lineWidth = 1.5;
                var lastEdge = -1e9;
                edges.forEach(function (g) {
                    if (Math.max(g[2], g[4]) < v0 || Math.min(g[2], g[4]) > v1) return;
                    /* zoomed out, one edge in 4 pixels: the path's bands still show where it runs */
                    var ex = X(g[2]);
                    if (Math.abs(ex - lastEdge) < 4) return;
                    lastEdge = ex;
                    ctx.beginPath();
                    ctx.moveTo(X(g[2]), laneY(g[1]) + laneH - 2);
                    ctx.lineTo(X(g[4]), laneY(g[3]) + laneH - 2);
                    ctx.stroke();
                });
            }
            /* messages */
            if (opts.messages) {
                ctx.strokeStyle = 'rgba(51, 102, 170, 0.55)'; ctx.lineWidth = 1;
                ctx.beginPath();
                var lastMsg = {};
                D.messages.data.forEach(function (m) {
                    if (Math.max(m[1], m[3]) < v0 || Math.min(m[1], m[3]) > v1) return;
                    var xs = X(m[1]), xr = X(m[3]), ys = laneY(m[0]) + laneH / 2, yr = laneY(m[2]) + laneH / 2;
                    /* zoomed out, one message a pair of ranks in 4 pixels */
                    var key = m[0] + ':' + m[2];
                    if (lastMsg[key] !== undefined && Math.abs(xs - lastMsg[key]) < 4) return;
                    lastMsg[key] = xs;
                    ctx.moveTo(xs, ys); ctx.lineTo(xr, yr);
                    /* arrow head at the receive */
                    var ang = Math.atan2(yr - ys, xr - xs);
                    ctx.moveTo(xr, yr); ctx.lineTo(xr - 5 * Math.cos(ang - 0.4), yr - 5 * Math.sin(ang - 0.4));
                    ctx.moveTo(xr, yr); ctx.lineTo(xr - 5 * Math.cos(ang + 0.4), yr - 5 * Math.sin(ang + 0.4));
                    s.messages++;
                });
                ctx.stroke();
            }
            /* domino path */
            if (opts.domino) {
                dom.forEach(function (d) {
                    if (d.end < v0 || d.start > v1) return;
                    var x0 = X(d.start), x1 = Math.max(X(d.end), x0 + 3), y0 = laneY(d.rank) + 1;
                    ctx.strokeStyle = DOMINO; ctx.lineWidth = 2;
                    ctx.strokeRect(x0, y0, x1 - x0, laneH - 2);
                    ctx.fillStyle = DOMINO;
                    ctx.fillText('D' + d.step, x1 + 3, y0 + laneH / 2);
                    s.domino++;
                });
            }
            if (sel) {
                ctx.fillStyle = 'rgba(91, 141, 239, 0.18)';
                ctx.fillRect(X(Math.min(sel.a, sel.b)), AXIS, Math.abs(X(sel.b) - X(sel.a)), H - AXIS);
            }
            ctx.restore();
            /* rank labels */
            ctx.fillStyle = '#eef0f4';
            ctx.fillRect(0, 0, LABEL, H);
            ctx.fillStyle = '#1d2330';
            for (r = 0; r < nr; r++) {
                if (laneH < 10 && r % Math.ceil(10 / laneH)) continue;
                var host = D.hosts[r] ? ' ' + D.hosts[r] : '';
                ctx.fillText(('rank ' + r + host).slice(0, 18), 4, laneY(r) + laneH / 2);
            }
            ctx.fillText(fmtNs(v1 - v0) + ' shown', 4, 10);
            stats = s;
            cv.setAttribute('data-drawn', s.events);
            cv.setAttribute('data-view', Math.round(v0) + ',' + Math.round(v1));
            lod.textContent = 'Drawn: ' + fmtInt(s.events) + ' calls one by one, ' + fmtInt(s.columns) + ' pixel columns summing ' +
                fmtInt(s.summed) + ' calls and ' + fmtInt(s.bins) + ' bins of ' + fmtNs(BW) + ' (height: share of the time in MPI, colour: the function with the most time)' +
                (D.detail.complete ? '.' : '; every call is embedded from ' + fmtNs(DW0) + ' to ' + fmtNs(DW1) + ' (green band on the axis), the rest of the run as bins.');
        }

        var pending = false;
        function schedule() {
            if (pending) return;
            pending = true;
            window.requestAnimationFrame(function () { pending = false; draw(); });
        }
        function clampView() {
            var span = v1 - v0, maxSpan = (full1 - full0) * 1.5;
            if (span < 10) { var c = (v0 + v1) / 2; v0 = c - 5; v1 = c + 5; }
            if (span > maxSpan) { v0 = full0 - (maxSpan - (full1 - full0)) / 2; v1 = v0 + maxSpan; }
        }
        function zoomTo(a, b) {
            var span = Math.max(b - a, 100), pad = Math.max(span * 3, 2000);
            v0 = a - pad; v1 = b + pad;
            clampView();
            draw();
            box.scrollIntoView({ block: 'nearest' });
        }

        cv.addEventListener('wheel', function (ev) {
            ev.preventDefault();
            var rect = cv.getBoundingClientRect(), x = ev.clientX - rect.left;
            if (x < LABEL) x = LABEL;
            var t = T(x), f = Math.exp(ev.deltaY * (ev.deltaMode === 1 ? 0.05 : 0.0015));
            v0 = t - (t - v0) * f; v1 = t + (v1 - t) * f;
            clampView();
            schedule();
        }, { passive: false });
        var drag = null;
        cv.addEventListener('mousedown', function (ev) {
            if (ev.shiftKey) {
                var t = T(ev.clientX - cv.getBoundingClientRect().left);
                sel = { a: t, b: t, on: true };
                return;
            }
            drag = { x: ev.clientX, v0: v0, v1: v1 };
            cv.classList.add('vt-dragging');
            tip.style.display = 'none';
        });
        window.addEventListener('mouseup', function () {
            drag = null;
            cv.classList.remove('vt-dragging');
            if (sel && sel.on) {
                sel.on = false;
                if (sel.a !== sel.b) rangeStats(Math.min(sel.a, sel.b), Math.max(sel.a, sel.b));
                schedule();
            }
        });
        window.addEventListener('mousemove', function (ev) {
            if (sel && sel.on) {
                sel.b = T(ev.clientX - cv.getBoundingClientRect().left);
                schedule();
                return;
            }
            if (!drag) return;
            var dt = (ev.clientX - drag.x) / (W - LABEL - 8) * (drag.v1 - drag.v0);
            v0 = drag.v0 - dt; v1 = drag.v1 - dt;
            schedule();
        });
        cv.addEventListener('mousemove', function (ev) {
            if (drag) return;
            var rect = cv.getBoundingClientRect(), x = ev.clientX - rect.left, y = ev.clientY - rect.top;
            var r = Math.floor((y - AXIS) / laneH), text = null;
            if (x >= LABEL && r >= 0 && r < nr) {
                var t = T(x), tol = (v1 - v0) / (W - LABEL) * 2, L = lanes[r];
                var i = lowerBound(L.ev, t - L.maxDur - tol);
                for (; i < L.ev.length && L.ev[i][1] <= t + tol; i++) {
                    var e = L.ev[i];
                    if (e[1] - tol <= t && t <= e[1] + e[2] + tol) {
                        text = (e[3] >= 0 ? names[e[3]] : '?') + '  event ' + r + ':' + e[4] + '\nstart ' + fmtNs(e[1]) +
                            ', duration ' + fmtNs(e[2]) + ((e[5] & 1) ? '\non the critical path' : '');
                    }
                }
                if (!text) {
                    i = lowerBound(L.agg, t - L.maxAgg);
                    for (; i < L.agg.length && L.agg[i][1] <= t; i++) {
                        var a = L.agg[i];
                        if (a[1] <= t && t <= a[1] + a[2])
                            text = 'aggregated: ' + a[3] + ' merged events\nstart ' + fmtNs(a[1]) + ', duration ' + fmtNs(a[2]);
                    }
                }
            }
            if (!text && x >= LABEL && r >= 0 && r < nr && (t < DW0 || t >= DW1)) {
                var B = lanes[r].bins, k = lowerBin(B, t);
                if (k >= 0 && t < B[k][0] + BW) {
                    var bn = B[k];
                    text = 'bin of ' + fmtNs(BW) + ' from ' + fmtNs(bn[0]) + ' (calls not embedded here)\n' + fmtInt(bn[2]) + ' calls, ' +
                        fmtPct(bn[1] / BW) + ' in MPI' + (bn[4] > 0 ? ', most in ' + (bn[3] >= 0 ? names[bn[3]] : '?') + ' (' + fmtNs(bn[4]) + ')' : '') +
                        (bn[5] > 0 ? '\naggregated ' + fmtNs(bn[5]) : '');
                }
            }
            if (text) {
                tip.textContent = text;
                tip.style.display = 'block';
                tip.style.left = Math.min(x + 14, W - 260) + 'px';
                tip.style.top = (y + 14) + 'px';
            } else {
                tip.style.display = 'none';
            }
        });
        cv.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
        function resetView() { v0 = full0; v1 = full1; sel = null; schedule(); }
        rangeBtn.addEventListener('click', function () { sel = null; rangeStats(Math.max(v0, 0), Math.min(v1, D.duration_ns)); schedule(); });

        /* Statistics of [a, b]: each function's time in it summed over ranks (the embedded
         * calls, clipped), computation (the ranks' runs less their calls), the critical
         * path's time; shares of the ranks' time in the range. */
        var rangeBox = el('div', { id: 'vt-range' });
        app.appendChild(rangeBox);
        function rangeStats(a, b) {
            var per = {}, calls = 0, busy = 0, path = 0;
            function clip(s, e) { return Math.max(0, Math.min(e, b) - Math.max(s, a)); }
            for (var r = 0; r < nr; r++) {
                var sp = D.spans && D.spans[r];
                if (sp) busy += clip(sp[0], sp[1]);
                lanes[r].ev.forEach(function (e) {
                    var c = clip(e[1], e[1] + e[2]);
                    if (c > 0) { per[e[3]] = (per[e[3]] || 0) + c; calls += sp ? clip(Math.max(e[1], sp[0]), Math.min(e[1] + e[2], sp[1])) : c; }
                });
                /* outside the detail window, the bins: their dominant function, the rest
                 * of their time in calls as "other MPI calls", in proportion to the part
                 * of the bin in the range */
                lanes[r].bins.forEach(function (bn) {
                    var o = clip(bn[0], Math.min(bn[0] + BW, DW0)) + clip(Math.max(bn[0], DW1), bn[0] + BW);
                    if (o <= 0 || bn[1] <= 0) return;
                    var f = o / BW;
                    if (bn[4] > 0) per[bn[3]] = (per[bn[3]] || 0) + bn[4] * f;
                    if (bn[1] > bn[4]) per[-2] = (per[-2] || 0) + (bn[1] - bn[4]) * f;
                    calls += bn[1] * f;
                });
            }
            segs.forEach(function (g) { path += clip(g[1], g[2]); });
            var total = 0;
            for (r = 0; r < nr; r++) total += clip(0, D.duration_ns);
            var rows = Object.keys(per).map(Number).sort(function (x, y) { return per[y] - per[x]; }).slice(0, 15).map(function (i) {
                return { cells: [i >= 0 ? names[i] : i === -2 ? 'other MPI calls (bins)' : '?', fmtNs(per[i]), fmtPct(total > 0 ? per[i] / total : 0)] };
            });
            var comp = Math.max(0, busy - calls);
            rows.unshift({ cells: ['computation', fmtNs(comp), fmtPct(total > 0 ? comp / total : 0)] });
            rangeBox.textContent = '';
            rangeBox.appendChild(el('h3', { text: 'Statistics from ' + fmtNs(a) + ' to ' + fmtNs(b) + ' (' + fmtNs(b - a) + ', ' + nr +
                ' ranks; critical path ' + fmtNs(path) + ' of it)' + (D.detail.complete ? '' : '; outside the detail window from the bins') }));
            var t = table(['', 'time (summed over ranks)', 'share of the ranks\' time'], rows, [0, 1, 1]);
            t.id = 'vt-range-table';
            rangeBox.appendChild(t);
        }
        cv.addEventListener('dblclick', resetView);
        reset.addEventListener('click', resetView);
        window.addEventListener('resize', function () { size(); schedule(); });

        /* a view given in the page's address, #view=FROM,TO (ns from the start) */
        var hv = /[#&]view=(-?[\d.]+),(-?[\d.]+)/.exec(window.location.hash);
        if (hv && +hv[2] > +hv[1]) { v0 = +hv[1]; v1 = +hv[2]; }
        var colorMap = { computation: COMPUTATION, path: PATH, domino: DOMINO, detail: DETAIL, other: OTHER, hatch: '#e3e5ea' };
        names.forEach(function (n, i) { colorMap[n] = colors[i]; });
        size();
        /* the stretches of a reduced trace: hatched grey */
        var pc = document.createElement('canvas');
        pc.width = pc.height = 8;
        var pctx = pc.getContext('2d');
        pctx.fillStyle = '#e3e5ea'; pctx.fillRect(0, 0, 8, 8);
        pctx.strokeStyle = '#b4b8c1'; pctx.lineWidth = 1.5;
        pctx.beginPath(); pctx.moveTo(0, 8); pctx.lineTo(8, 0); pctx.stroke();
        hatch = ctx.createPattern(pc, 'repeat');
        draw();   /* synchronously, so that the page is complete once loaded */
        rangeStats(0, D.duration_ns);
        return { zoomTo: zoomTo, get stats() { return stats; }, colors: colorMap,
                 get geometry() {
                     var rc = cv.getBoundingClientRect();
                     return { left: rc.left + window.scrollX, top: rc.top + window.scrollY, label: LABEL, axis: AXIS, lane: laneH, width: W,
                              pad: laneH > 12 ? 3 : 1, dpr: dpr, view: [v0, v1], detail: [X(Math.max(DW0, v0)), X(Math.min(DW1, v1))] };
                 } };
    }

    /* ---------------------------------------------------------------- tables */

    function eventCell(d, tl) {
        return d.start !== undefined ? function () { tl.zoomTo(d.start, d.end); } : null;
    }

    function criticalPath(D, app, tl) {
        app.appendChild(el('h2', { text: 'Critical path (measured run)' }));
        var c = D.critical_path;
        if (!c.available) {
            app.appendChild(el('p', { cls: 'vt-empty', text: 'Not available: ' + c.error }));
            return;
        }
        app.appendChild(el('p', { text: 'Length ' + fmtNs(c.length_ns) + ' (startup ' + fmtNs(c.startup_ns) + '), ' + fmtInt(c.steps) +
            ' events in ' + fmtInt(c.segments.total) + ' segments joined by ' + fmtInt(c.edges.total) + ' edges; ends on rank ' +
            c.end_rank + (c.consistent ? '.' : '. INCONSISTENT (please report).') +
            ' On the timeline: a black band under each segment, black lines for the edges.' }));
        var cols = el('div', { cls: 'vt-cols' });
        var fr = c.per_function.slice(0, 15).map(function (f) {
            return { cells: [f.function, fmtNs(f.ns), fmtPct(c.length_ns > 0 ? f.ns / c.length_ns : 0), fmtInt(f.events)] };
        });
        cols.appendChild(el('div', null, [el('h3', { text: 'per function' }), table(['function', 'time on path', 'share', 'events'], fr, [0, 1, 1, 1])]));
        var rr = [];
        c.per_rank.forEach(function (ns, r) {
            if (ns > 0) rr.push({ cells: ['rank ' + r, fmtNs(ns), fmtPct(c.length_ns > 0 ? ns / c.length_ns : 0)] });
        });
        cols.appendChild(el('div', null, [el('h3', { text: 'per rank' }), table(['rank', 'time on path', 'share'], rr.slice(0, 32), [0, 1, 1])]));
        app.appendChild(cols);
    }

    function fixFirst(D, app) {
        app.appendChild(el('h2', { text: 'What to fix first' }));
        var F = D.fix_first;
        if (!F || (!F.rank.length && !F.function.length)) {
            app.appendChild(el('p', { cls: 'vt-empty', text: D.analysis_error ? 'Not available: ' + D.analysis_error : 'No candidate events.' }));
            return;
        }
        app.appendChild(el('p', { text: 'The predicted gain of eliminating every candidate of one rank, or the computation before the calls of ' +
            'one function, at once (as vtrace domino --by rank and --by function); each scenario gives the same with vtrace whatif -s.' }));
        var cols = el('div', { cls: 'vt-cols' });
        [['rank', 'by rank'], ['function', 'by function']].forEach(function (k) {
            var rows = F[k[0]].map(function (w) {
                return { cells: [w.what, fmtInt(w.candidates), fmtNs(w.duration_ns), fmtNs(w.gain_ns),
                    el('span', null, [bar(w.gain_pct / 100, 'gain'), ' ' + w.gain_pct.toFixed(2) + '%']), w.scenario] };
            });
            var t = table([k[0], 'candidates', 'duration', 'gain', 'gain %', 'scenario'], rows, [0, 1, 1, 1, 0, 0]);
            t.id = 'vt-fix-' + k[0];
            cols.appendChild(el('div', null, [el('h3', { text: k[1] }), t]));
        });
        app.appendChild(cols);
        var B = F.balance;
        if (B) {
            var p = el('p', { text: 'Load imbalance: if no rank computed longer than the mean of the ranks between two collectives on ' +
                'MPI_COMM_WORLD (' + fmtInt(B.intervals) + ' intervals, ' + fmtNs(B.above_ns) + ' of computation above the mean), ' +
                'the run would gain ' + fmtNs(B.gain_ns) + ' (' + B.gain_pct.toFixed(2) + '%; vtrace whatif -s balance).' });
            p.id = 'vt-fix-balance';
            p.setAttribute('data-gain-ns', B.gain_ns);
            app.appendChild(p);
        }
    }

    function domino(D, app, tl) {
        app.appendChild(el('h2', { text: 'Domino path' }));
        if (!D.domino.length) {
            app.appendChild(el('p', { cls: 'vt-empty', text: D.analysis_error ? 'Not available: ' + D.analysis_error :
                D.candidates ? 'No steps requested (--top 0).' : 'No candidate events (none lasts the threshold ' + fmtNs(D.threshold_ns) + ').' }));
            return;
        }
        app.appendChild(el('p', { text: 'Greedily the event whose elimination gains the most, given the ones before (as vtrace domino; ' +
            D.candidates + ' candidates considered). Outlined in violet on the timeline (D1, D2, ...); click a row to show it.' }));
        var rows = D.domino.map(function (d) {
            return { cells: [d.step, d.event, d.what, fmtNs(d.duration_ns), fmtNs(d.predicted_ns), fmtNs(d.step_gain_ns),
                el('span', null, [bar(d.gain_pct / 100, 'gain'), ' ' + d.gain_pct.toFixed(2) + '%'])], onclick: eventCell(d, tl) };
        });
        app.appendChild(table(['step', 'event', 'what', 'duration', 'predicted run time', 'step gain', 'total gain'], rows, [1, 0, 0, 1, 1, 1, 0]));
    }

    function whatif(D, app, tl) {
        app.appendChild(el('h2', { text: 'What-if gains' }));
        if (!D.whatif.length) {
            app.appendChild(el('p', { cls: 'vt-empty', text: D.analysis_error ? 'Not available: ' + D.analysis_error : 'No candidate events.' }));
            return;
        }
        app.appendChild(el('p', { text: 'The ' + D.whatif.length + ' longest candidate events, each eliminated alone, by predicted gain (MPI_Init left out).' }));
        var best = Math.max.apply(null, D.whatif.map(function (w) { return Math.max(w.gain_ns, 0); })) || 1;
        var rows = D.whatif.map(function (w) {
            return { cells: [w.event, w.what, fmtNs(w.duration_ns), fmtNs(w.predicted_ns), fmtNs(w.gain_ns),
                el('span', null, [bar(w.gain_ns / best, 'gain'), ' ' + w.gain_pct.toFixed(2) + '%'])], onclick: eventCell(w, tl) };
        });
        app.appendChild(table(['event', 'what', 'duration', 'predicted run time', 'gain', 'gain %'], rows, [0, 0, 1, 1, 1, 0]));
    }

    function patterns(D, app) {
        app.appendChild(el('h2', { text: 'Wait states' }));
        var P = D.patterns;
        if (!P || !P.available) {
            app.appendChild(el('p', { cls: 'vt-empty', text: 'Not available' + (P && P.error ? ': ' + P.error : '.') }));
            return;
        }
        app.appendChild(el('p', { text: 'As vtrace patterns finds them: severity as time and share of the ranks\' time (each rank\'s run time, summed)' +
            (P.reduced ? '; a reduced trace: waits are lower bounds, costs upper bounds.' : '.') }));
        var rows = P.totals.map(function (p) {
            return { cells: [p.pattern, fmtInt(p.count), fmtNs(p.severity_ns), fmtPct(P.total_ns > 0 ? p.severity_ns / P.total_ns : 0), p.bound] };
        });
        var t = table(['pattern', 'instances', 'severity', 'share', 'bound'], rows, [0, 1, 1, 1, 0]);
        t.id = 'vt-patterns';
        app.appendChild(t);
        if (P.findings.length) {
            app.appendChild(el('h3', { text: 'Largest findings' }));
            app.appendChild(table(['pattern', 'rank', 'call site', 'severity', 'instances'], P.findings.map(function (f) {
                return { cells: [f.pattern, f.rank, f.callsite, fmtNs(f.severity_ns), fmtInt(f.count)] };
            }), [0, 1, 0, 1, 1]));
        }
    }

    function profile(D, app) {
        app.appendChild(el('h2', { text: 'Profile' }));
        app.appendChild(el('p', { text: 'Every MPI call of every rank (also the ones not recorded one by one); share of the time in MPI.' }));
        var top = D.profile.length ? D.profile[0].share : 1;
        var rows = D.profile.map(function (p) {
            return { cells: [p.function, fmtInt(p.calls), fmtNs(p.time_ns), fmtNs(p.calls ? p.time_ns / p.calls : 0), fmtInt(p.bytes),
                el('span', null, [bar(top > 0 ? p.share / top : 0), ' ' + fmtPct(p.share)])], cls: 'vt-prof-row' };
        });
        var t = table(['function', 'calls', 'time', 'mean', 'bytes', 'share'], rows, [0, 1, 1, 1, 1, 0]);
        t.id = 'vt-profile';
        app.appendChild(t);
    }

    try {
        main();
    } catch (e) {
        fail(e && e.stack ? e.stack : String(e));
    }
})();
