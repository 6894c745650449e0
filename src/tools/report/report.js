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
    var PATH = '#16181d', DOMINO = '#7b2ff7', COMPUTATION = '#f3e7b3';
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
        [['events', 'calls', 'the shortest'], ['messages', 'messages', 'the shortest'], ['markers', 'markers', 'the last'],
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
        sum.setAttribute('data-fix-rank-rows', D.fix_first ? D.fix_first.rank.length : 0);
        sum.setAttribute('data-fix-function-rows', D.fix_first ? D.fix_first.function.length : 0);
        sum.setAttribute('data-fix-first-rank', D.fix_first && D.fix_first.rank.length ? D.fix_first.rank[0].what : '');
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

        var box = el('div', { id: 'vt-timeline-box' });
        var cv = el('canvas', { id: 'vt-timeline' });
        var tip = el('div', { id: 'vt-tooltip' });
        box.appendChild(cv);
        box.appendChild(tip);
        app.appendChild(box);

        /* per rank: calls, aggregated stretches, markers sorted by start */
        var lanes = [];
        for (var r = 0; r < nr; r++) lanes.push({ ev: [], agg: [], mk: [], maxDur: 0, maxAgg: 0 });
        var fnTime = {};
        D.events.data.forEach(function (e) {
            var L = lanes[e[0]];
            if (!L) return;
            L.ev.push(e);
            if (e[2] > L.maxDur) L.maxDur = e[2];
            fnTime[e[3]] = (fnTime[e[3]] || 0) + e[2];
        });
        D.aggregated.data.forEach(function (a) {
            var L = lanes[a[0]];
            if (!L) return;
            L.agg.push(a);
            if (a[2] > L.maxAgg) L.maxAgg = a[2];
        });
        D.markers.data.forEach(function (m) { if (lanes[m[0]]) lanes[m[0]].mk.push(m); });
        lanes.forEach(function (L) {
            L.ev.sort(function (a, b) { return a[1] - b[1]; });
            L.agg.sort(function (a, b) { return a[1] - b[1]; });
        });
        var colors = names.map(function (n, i) { return color(i, names); });
        var segs = D.critical_path.available ? D.critical_path.segments.data : [];
        var edges = D.critical_path.available ? D.critical_path.edges.data : [];
        var dom = D.domino.filter(function (d) { return d.start !== undefined; });

        /* legend: the functions with the most time on the timeline */
        var order = Object.keys(fnTime).map(Number).sort(function (a, b) { return fnTime[b] - fnTime[a]; });
        var leg = el('div', { cls: 'vt-legend' });
        order.slice(0, 16).forEach(function (i) {
            leg.appendChild(el('span', null, [el('span', { cls: 'sw', style: 'background:' + (i >= 0 ? colors[i] : '#999') }), i >= 0 ? names[i] : '?']));
        });
        if (D.kind === 'reduced') leg.appendChild(el('span', null, [el('span', { cls: 'sw', style: 'background:#c9ccd3' }), 'aggregated (merged events)']));
        leg.appendChild(el('span', null, [el('span', { cls: 'sw', style: 'background:' + COMPUTATION }),
            'computation' + (D.events.omitted > 0 ? ' (and calls not embedded)' : '')]));
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
        var stats = { events: 0, messages: 0, aggregated: 0, path: 0, domino: 0, computation: 0 };
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

        function niceStep(span, px) {
            var raw = span / Math.max(1, px / 110), p = Math.pow(10, Math.floor(Math.log10(raw)));
            var m = raw / p;
            return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
        }

        function draw() {
            var s = { events: 0, messages: 0, aggregated: 0, path: 0, domino: 0, computation: 0 };
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
                /* aggregated stretches of a reduced trace */
                var i = lowerBound(L.agg, v0 - L.maxAgg);
                for (; i < L.agg.length && L.agg[i][1] <= v1; i++) {
                    var a = L.agg[i], x0 = X(a[1]), x1 = X(a[1] + a[2]);
                    if (x1 < LABEL) continue;
                    ctx.fillStyle = hatch || '#d5d8de';
                    ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
                    s.aggregated++;
                    if (x1 - x0 > 70 && h >= 10) {
                        ctx.fillStyle = '#505766';
                        var lbl = 'aggregated (' + a[3] + ')';
                        if (ctx.measureText(lbl).width > x1 - x0 - 6) lbl = 'aggregated';
                        ctx.fillText(lbl, Math.max(x0, LABEL) + 3, y + h / 2);
                    }
                }
                /* calls: one rectangle per pixel column at most */
                var last = -1e9;
                i = lowerBound(L.ev, v0 - L.maxDur);
                for (; i < L.ev.length && L.ev[i][1] <= v1; i++) {
                    var e = L.ev[i];
                    var ex0 = X(e[1]), ex1 = X(e[1] + e[2]);
                    if (ex1 < LABEL) continue;
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
                edges.forEach(function (g) {
                    if (Math.max(g[2], g[4]) < v0 || Math.min(g[2], g[4]) > v1) return;
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
                D.messages.data.forEach(function (m) {
                    if (Math.max(m[1], m[3]) < v0 || Math.min(m[1], m[3]) > v1) return;
                    var xs = X(m[1]), xr = X(m[3]), ys = laneY(m[0]) + laneH / 2, yr = laneY(m[2]) + laneH / 2;
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
            }
            segs.forEach(function (g) { path += clip(g[1], g[2]); });
            var total = 0;
            for (r = 0; r < nr; r++) total += clip(0, D.duration_ns);
            var rows = Object.keys(per).map(Number).sort(function (x, y) { return per[y] - per[x]; }).slice(0, 15).map(function (i) {
                return { cells: [i >= 0 ? names[i] : '?', fmtNs(per[i]), fmtPct(total > 0 ? per[i] / total : 0)] };
            });
            var comp = Math.max(0, busy - calls);
            rows.unshift({ cells: ['computation', fmtNs(comp), fmtPct(total > 0 ? comp / total : 0)] });
            rangeBox.textContent = '';
            rangeBox.appendChild(el('h3', { text: 'Statistics from ' + fmtNs(a) + ' to ' + fmtNs(b) + ' (' + fmtNs(b - a) + ', ' + nr +
                ' ranks; critical path ' + fmtNs(path) + ' of it)' + (D.events.omitted > 0 ? '; calls not embedded count as computation' : '') }));
            var t = table(['', 'time (summed over ranks)', 'share of the ranks\' time'], rows, [0, 1, 1]);
            t.id = 'vt-range-table';
            rangeBox.appendChild(t);
        }
        cv.addEventListener('dblclick', resetView);
        reset.addEventListener('click', resetView);
        window.addEventListener('resize', function () { size(); schedule(); });

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
        return { zoomTo: zoomTo, get stats() { return stats; } };
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
