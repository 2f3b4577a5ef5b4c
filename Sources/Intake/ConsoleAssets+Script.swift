extension ConsoleAssets {
    /// The console's one script. Rules it keeps: every value from the API goes into the page through
    /// `textContent` or an attribute set by `setAttribute` (never `innerHTML`); every call but GET sends the
    /// session's CSRF token; a 401 goes back to the sign-in page.
    static let script = #"""
        'use strict';
        (function () {
          const state = { csrf: null, timer: null, page: null, params: null, confirmOpen: false, polling: false };
          const POLL_MS = 5000;
          const SVG = 'http://www.w3.org/2000/svg';

          function el(tag, attrs, children) {
            const node = document.createElement(tag);
            for (const [key, value] of Object.entries(attrs || {})) {
              if (value === null || value === undefined || value === false) continue;
              if (key === 'text') node.textContent = String(value);
              else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
              else node.setAttribute(key, value === true ? '' : String(value));
            }
            for (const child of [].concat(children || [])) {
              if (child === null || child === undefined) continue;
              node.appendChild(typeof child === 'string' || typeof child === 'number'
                ? document.createTextNode(String(child)) : child);
            }
            return node;
          }

          function svg(tag, attrs, children) {
            const node = document.createElementNS(SVG, tag);
            for (const [key, value] of Object.entries(attrs || {})) {
              if (key === 'text') node.textContent = String(value); else node.setAttribute(key, String(value));
            }
            for (const child of [].concat(children || [])) if (child) node.appendChild(child);
            return node;
          }

          function fmt(n) { return typeof n === 'number' ? n.toLocaleString('en') : String(n); }
          function ago(iso) {
            const s = Math.max(0, (Date.now() - Date.parse(iso)) / 1000);
            if (s < 90) return Math.round(s) + ' s ago';
            if (s < 5400) return Math.round(s / 60) + ' min ago';
            if (s < 172800) return Math.round(s / 3600) + ' h ago';
            return Math.round(s / 86400) + ' d ago';
          }

          async function api(path, options) {
            const opts = Object.assign({ credentials: 'same-origin', headers: {} }, options || {});
            // The page's own refresh is no use of the session: it does not keep an idle tab signed in.
            if (state.polling && (!opts.method || opts.method === 'GET')) opts.headers['X-Herald-Console-Poll'] = '1';
            if (opts.method && opts.method !== 'GET') {
              opts.headers['X-CSRF-Token'] = state.csrf || '';
              if (opts.body !== undefined) opts.headers['Content-Type'] = 'application/json';
            }
            const response = await fetch(path, opts);
            if (response.status === 401) { window.location.assign('/console/login'); throw new Error('signed out'); }
            if (response.status === 204) return null;
            const body = await response.json();
            if (!response.ok) {
              const error = new Error(body && body.error ? body.error.message : 'HTTP ' + response.status);
              error.code = body && body.error ? body.error.code : 'http_' + response.status;
              throw error;
            }
            return body;
          }

          function parseHash() {
            const hash = window.location.hash.replace(/^#\/?/, '');
            const [page, query] = hash.split('?');
            return { page: page || 'overview', params: new URLSearchParams(query || '') };
          }

          function link(page, params) {
            const query = new URLSearchParams();
            for (const [k, v] of Object.entries(params || {})) if (v) query.set(k, v);
            const text = query.toString();
            return '#/' + page + (text ? '?' + text : '');
          }

          function table(headers, rows) {
            return el('div', { class: 'box' }, el('table', {}, [
              el('thead', {}, el('tr', {}, headers.map(h =>
                el('th', { class: h.endsWith('#') ? 'num' : null, text: h.replace(/#$/, '') })))),
              el('tbody', {}, rows.length ? rows : [el('tr', {}, el('td', { colspan: headers.length, class: 'muted', text: 'None.' }))]),
            ]));
          }
          function td(value, cls) { return el('td', { class: cls || null, text: value === null || value === undefined ? '—' : value }); }
          function num(value) { return td(fmt(value), 'num'); }
          // A share of the deliveries sent, '97.5% (39 / 40)'; '—' before anything was sent.
          function rate(e, count, share, cls) {
            const shown = e && e[share] !== null;
            return td(shown ? (e[share] * 100).toFixed(1) + '% (' + fmt(e[count]) + ' / ' + fmt(e.sent) + ')' : null,
              'num ' + cls);
          }

          function filters(page, fields, params) {
            const form = el('form', { class: 'filters', id: page + '-filters' });
            for (const f of fields) {
              form.appendChild(el('label', {}, [f.label, el('input', {
                name: f.name, id: 'filter-' + f.name, value: params.get(f.name) || '', placeholder: f.placeholder || '',
                type: f.type || 'text', size: f.size || 18 })]));
            }
            form.appendChild(el('button', { type: 'submit', class: 'primary', text: 'Apply' }));
            form.addEventListener('submit', event => {
              event.preventDefault();
              const values = {};
              for (const f of fields) values[f.name] = form.elements[f.name].value.trim();
              window.location.hash = link(page, values);
            });
            return form;
          }

          // Pages: each returns the nodes of the page for its params; the poll calls it again.
          const pages = {
            async overview() {
              const o = await api('/api/admin/console/overview');
              const byState = {};
              for (const q of o.queue) byState[q.state] = (byState[q.state] || 0) + q.count;
              const failures = ['failed', 'dead', 'expired', 'token_invalid'].reduce((s, k) => s + (o.outcomesLastHour[k] || 0), 0);
              const live = o.workers.filter(w => w.status === 'live').length;
              return [
                el('h1', { text: 'Overview' }),
                el('div', { class: 'cards' }, [
                  card('Due now', fmt(byState.pending || 0), 'overview-pending'),
                  card('Scheduled', fmt(byState.scheduled || 0), 'overview-scheduled'),
                  card('In flight', fmt(byState.leased || 0), 'overview-leased'),
                  card('Oldest due', fmt(o.oldestDueSeconds) + ' s', 'overview-oldest'),
                  card('Deliveries/s (5 min)', fmt(o.deliveriesPerSecond.last5m), 'overview-rate'),
                  card('Sent (1 h)', fmt(o.outcomesLastHour.sent || 0), 'overview-sent'),
                  card('Failed (1 h)', fmt(failures), 'overview-failed'),
                  card('Workers live', fmt(live) + ' / ' + fmt(o.workers.length), 'overview-workers'),
                ]),
                el('h2', { text: 'Deliveries over the last hour' }),
                chart(o.lastHour),
                el('h2', { text: 'Queue by state and lane' }),
                table(['State', 'Lane', 'Deliveries#'], o.queue.map(q => el('tr', {}, [td(q.state), td(q.lane), num(q.count)]))),
                el('h2', { text: 'Paused upstreams' }),
                table(['Upstream', 'Worker'], o.pausedUpstreams.map(p => el('tr', {}, [td(p.upstream), td(p.workerId)]))),
                el('h2', { text: 'Workers' }),
                workersTable(o.workers),
              ];
            },

            async audit() {
              const a = await api('/api/admin/audit?limit=200');
              const who = e => e.actor + (e.actorDetail ? ' ' + e.actorDetail : '');
              return [
                el('h1', { text: 'Audit' }),
                el('p', { class: 'muted', text: 'Changes to partners, console sign-ins and replays, newest first '
                  + '(the last 200; GET /api/admin/audit pages further).' }),
                table(['When', 'Who', 'Client', 'Action', 'Partner', 'What'], a.entries.map(e => el('tr', {}, [
                  td(ago(e.at)), td(who(e)), td(e.client || ''), td(e.action, 'audit-action'),
                  td(e.miniAppId || ''), td(JSON.stringify(e.detail), 'wrap'),
                ]))),
              ];
            },

            async workers() {
              const w = await api('/api/admin/console/workers');
              return [el('h1', { text: 'Workers' }), workersTable(w.workers)];
            },

            async failures(params) {
              const query = new URLSearchParams();
              if (params.get('partner')) query.set('partner', params.get('partner'));
              if (params.get('hours')) query.set('hours', params.get('hours'));
              const f = await api('/api/admin/console/failures?' + query);
              const hours = params.get('hours') || '24';
              return [
                el('h1', { text: 'Failures' }),
                filters('failures', [{ name: 'partner', label: 'Partner (miniAppId)' },
                                     { name: 'hours', label: 'Last hours', size: 5, placeholder: '24' }], params),
                el('div', { id: 'replay-panel' }),
                table(['Partner', 'Outcome', 'Reason', 'Deliveries#', 'First', 'Last', ''], f.groups.map(g => el('tr', {}, [
                  el('td', {}, el('a', { href: link('requests', { partner: g.miniAppId }), text: g.miniAppId })),
                  td(g.outcome), td(g.reason, 'wrap'), num(g.count), td(ago(g.firstAt)), td(ago(g.lastAt)),
                  el('td', {}, el('button', { type: 'button', class: 'replay', text: 'Replay…',
                    onclick: () => askReplay(g, hours) })),
                ]))),
              ];
            },

            async requests(params) {
              const query = new URLSearchParams();
              for (const k of ['id', 'partner', 'since', 'until']) if (params.get(k)) query.set(k, params.get(k));
              const r = await api('/api/admin/console/requests?' + query);
              return [
                el('h1', { text: 'Requests' }),
                filters('requests', [{ name: 'id', label: 'Request id', size: 36 }, { name: 'partner', label: 'Partner (miniAppId)' },
                                     { name: 'since', label: 'Since (ISO 8601)', placeholder: '2026-12-01T00:00:00Z' },
                                     { name: 'until', label: 'Until', placeholder: '' }], params),
                table(['Created', 'Partner', 'Title', 'Lane', 'Deliveries#', 'Sent#', 'Failed#', 'Superseded#',
                       'Cancelled#', 'Pending#', 'Held#', 'Suppressed#'],
                  r.requests.map(q => el('tr', {}, [
                    el('td', {}, el('a', { href: link('request', { id: q.id }), text: q.createdAt })),
                    td(q.miniAppId), td(q.title, 'wrap'), td(q.lane), num(q.deliveries), num(q.sent), num(q.failed),
                    num(q.superseded), num(q.cancelled), num(q.pending), num(q.held), num(q.suppressed)]))),
              ];
            },

            async request(params) {
              const id = params.get('id') || '';
              const q = await api('/api/admin/console/requests/' + encodeURIComponent(id));
              return [
                el('h1', { text: 'Request' }),
                el('p', {}, [el('span', { class: 'muted', text: 'Title: ' }), el('span', { id: 'request-title', text: q.title })]),
                el('div', { class: 'cards' }, [card('Partner', q.miniAppId), card('Deliveries', fmt(q.deliveries)),
                  card('Sent', fmt(q.sent), 'request-sent'), card('Failed', fmt(q.failed), 'request-failed'),
                  card('Superseded', fmt(q.superseded)), card('Cancelled', fmt(q.cancelled), 'request-cancelled'),
                  card('Pending', fmt(q.pending)), card('Held (quiet hours)', fmt(q.held), 'request-held'),
                  card('Suppressed', fmt(q.suppressed), 'request-suppressed')]),
                el('p', { class: 'muted', text: 'Id ' + q.id + ', created ' + q.createdAt + ', ' + q.lane + ' lane.' }),
                el('h2', { text: 'Deliveries' }),
                // The reason beside the outcome: 'suppressed (user_cap)', 'failed (BadDeviceToken)'.
                table(['Finished', 'Service', 'Device', 'Outcome (reason)', 'Attempts#', 'Members#'],
                  q.deliveryRows.map(d => el('tr', {}, [td(d.finishedAt), td(d.service), td(d.deviceId),
                    td(d.outcome + (d.reason ? ' (' + d.reason + ')' : '') + (d.replayed ? ', replayed' : ''), 'wrap'),
                    num(d.attempts), num(d.members)]))),
              ];
            },

            async partners() {
              const p = await api('/api/admin/console/partners');
              return [
                el('h1', { text: 'Partners' }),
                el('div', { id: 'partner-panel' }),
                // Delivered and opened: what the host's app reported of the deliveries sent, pushes of the last 7 days.
                table(['', 'Mini-app', 'Name', 'Per minute#', 'Per day#', 'Delivered (7 d)#', 'Opened (7 d)#',
                  'Webhook', 'State', ''], p.partners.map(x => el('tr', {}, [
                  el('td', {}, x.icon ? el('img', { class: 'icon', alt: '', src: '/icons/' + encodeURIComponent(x.miniAppId) + '/64.png' }) : null),
                  el('td', {}, el('a', { href: link('requests', { partner: x.miniAppId }), text: x.miniAppId })),
                  td(x.displayName, 'wrap partner-name'),
                  num(x.usage ? x.usage.lastMinute + ' / ' + x.rateLimitPerMinute : x.rateLimitPerMinute),
                  num(x.usage ? x.usage.lastDay + ' / ' + x.rateLimitPerDay : x.rateLimitPerDay),
                  rate(x.engagement, 'received', 'deliveryRate', 'partner-delivered'),
                  rate(x.engagement, 'opened', 'openRate', 'partner-opened'),
                  td(!x.webhookUrl ? 'none' : x.usage && x.usage.webhookFailedLastDay
                    ? x.usage.webhookFailedLastDay + ' failed (1 d): ' + (x.usage.webhookLastError || '') : 'healthy', 'wrap'),
                  td((x.revokedAt ? 'revoked' : x.suspendedAt
                    ? 'suspended since ' + new Date(x.suspendedAt).toLocaleString() : x.previousKeyExpiresAt
                    ? 'active; previous key until ' + new Date(x.previousKeyExpiresAt).toLocaleString()
                    : 'active') + (x.previousWebhookSecretExpiresAt ? '; previous webhook secret until '
                    + new Date(x.previousWebhookSecretExpiresAt).toLocaleString() : ''), 'wrap'),
                  el('td', {}, x.revokedAt ? null : [
                    el('button', { type: 'button', class: 'rotate-key', 'data-mini-app': x.miniAppId,
                      text: 'Rotate key…', onclick: () => askPartner(x, 'rotate') }), ' ',
                    x.previousKeyExpiresAt ? el('button', { type: 'button', class: 'end-previous-key',
                      'data-mini-app': x.miniAppId, text: 'End previous key…',
                      onclick: () => askPartner(x, 'end-previous') }) : '',
                    x.previousKeyExpiresAt ? ' ' : '',
                    x.webhookUrl ? el('button', { type: 'button', class: 'rotate-webhook-secret',
                      'data-mini-app': x.miniAppId, text: 'Rotate webhook secret…',
                      onclick: () => askPartner(x, 'rotate-webhook-secret') }) : '',
                    x.webhookUrl ? ' ' : '',
                    x.previousWebhookSecretExpiresAt ? el('button', { type: 'button',
                      class: 'end-previous-webhook-secret', 'data-mini-app': x.miniAppId, text: 'End previous webhook secret…',
                      onclick: () => askPartner(x, 'end-previous-webhook-secret') }) : '',
                    x.previousWebhookSecretExpiresAt ? ' ' : '',
                    x.suspendedAt
                      ? el('button', { type: 'button', class: 'resume', 'data-mini-app': x.miniAppId, text: 'Resume…',
                        onclick: () => askPartner(x, 'resume') })
                      : el('button', { type: 'button', class: 'suspend', 'data-mini-app': x.miniAppId, text: 'Suspend…',
                        onclick: () => askPartner(x, 'suspend') }), ' ',
                    el('button', { type: 'button', text: 'Revoke…', onclick: () => askPartner(x, 'revoke') })]),
                ]))),
              ];
            },

            async activities() {
              const a = await api('/api/admin/console/live-activities');
              return [
                el('h1', { text: 'Live Activities' }),
                el('p', { class: 'muted', text: 'Held: an iPhone target keeping an update or end until the host reports the activity\u2019s update token.' }),
                table(['Partner', 'Active#', 'Held#'], a.partners.map(p => el('tr', {}, [
                  el('td', {}, el('a', { href: link('requests', { partner: p.miniAppId }), text: p.miniAppId })),
                  num(p.active), num(p.held)]))),
              ];
            },

            async webhooks(params) {
              const hours = params.get('hours') || '';
              const w = await api('/api/admin/console/webhooks' + (hours ? '?hours=' + encodeURIComponent(hours) : ''));
              return [
                el('h1', { text: 'Failed webhooks' }),
                filters('webhooks', [{ name: 'hours', label: 'Last hours', size: 5, placeholder: '24' }], params),
                el('div', { id: 'webhook-panel' }),
                table(['Failed', 'Partner', 'Event', 'Subject', 'Attempts#', 'Last status', 'Last error', ''], w.events.map(e => el('tr', {}, [
                  td(ago(e.finishedAt)), td(e.miniAppId), td(e.type), td(e.subjectId), num(e.attempts), td(e.lastStatus), td(e.lastError, 'wrap'),
                  el('td', {}, el('button', { type: 'button', class: 'webhook-replay', text: 'Send again…',
                    onclick: () => askWebhook(e, hours) })),
                ]))),
              ];
            },

            async tokens(params) {
              const hours = params.get('hours') || '';
              const t = await api('/api/admin/console/tokens' + (hours ? '?hours=' + encodeURIComponent(hours) : ''));
              return [
                el('h1', { text: 'Token invalidations' }),
                filters('tokens', [{ name: 'hours', label: 'Last hours', size: 5, placeholder: '24' }], params),
                table(['Upstream', 'Token', 'Reason', 'Deliveries#', 'Devices#', 'Last'], t.lines.map(l => el('tr', {}, [
                  td(l.upstream), td(l.token), td(l.reason), num(l.count), num(l.devices), td(ago(l.lastAt))]))),
              ];
            },
          };

          function card(label, figure, id) {
            return el('div', { class: 'card' }, [el('div', { class: 'muted', text: label }),
              el('div', { class: 'figure', id: id || null, text: figure })]);
          }

          function workersTable(workers) {
            return table(['Worker', 'Host', 'Release', 'Version', 'Status', 'Last seen', 'Started', 'In flight#',
              'Claims/s#', 'Paused'],
              workers.map(w => el('tr', {}, [td(w.workerId), td(w.host), td(w.release || '—'), td(w.version),
                el('td', { class: w.status, text: w.status }), td(ago(w.lastSeenAt)), td(ago(w.startedAt)),
                num(w.inFlight), num(w.claimsPerSecond), td(w.pausedUpstreams.join(', ') || '—')])));
          }

          // One bar per minute, oldest on the left: sent below, failures on top, the rest above.
          function chart(minutes) {
            const width = 600, height = 150, bar = width / 60;
            const total = m => Object.values(m.counts).reduce((s, n) => s + n, 0);
            const max = Math.max(1, ...minutes.map(total));
            const root = svg('svg', { class: 'chart', id: 'overview-chart', viewBox: '0 0 ' + width + ' ' + (height + 10),
              preserveAspectRatio: 'none', role: 'img', 'aria-label': 'Deliveries per minute, last hour' });
            for (const m of minutes) {
              const x = (59 - m.minutesAgo) * bar;
              const sent = m.counts.sent || 0;
              const failed = ['failed', 'dead', 'expired', 'token_invalid'].reduce((s, k) => s + (m.counts[k] || 0), 0);
              const other = total(m) - sent - failed;
              let y = height + 5;
              for (const [value, colour] of [[sent, '#1f8a4c'], [failed, '#c4321c'], [other, '#98a2b3']]) {
                if (!value) continue;
                const h = value / max * height;
                y -= h;
                root.appendChild(svg('rect', { x: x + 1, y: y, width: bar - 2, height: h, fill: colour },
                  svg('title', { text: m.minutesAgo + ' min ago: ' + value })));
              }
            }
            return el('div', {}, [root, el('div', { class: 'legend' }, [
              el('span', { class: 'swatch-sent', text: '■ sent' }), el('span', { class: 'swatch-failed', text: '■ failed, dead, expired, token invalid' }),
              el('span', { class: 'swatch-other', text: '■ other' }), el('span', { class: 'muted', text: 'peak ' + fmt(max) + '/min' })])]);
          }

          function confirmPanel(container, message, actionText, action, extra) {
            state.confirmOpen = true;
            container.replaceChildren(el('div', { class: 'confirm', id: 'confirm' }, [
              el('p', { id: 'confirm-text', text: message }), extra || '',
              el('button', { type: 'button', class: 'danger', id: 'confirm-yes', text: actionText, onclick: async () => {
                // An action that shows something to copy (a key shown once) keeps the poll away until it is dismissed.
                let keep = false;
                try { keep = (await action()) === 'keep'; }
                catch (e) { container.replaceChildren(el('p', { class: 'error', text: e.message })); }
                state.confirmOpen = keep;
              } }), ' ',
              el('button', { type: 'button', id: 'confirm-no', text: 'Cancel', onclick: () => {
                state.confirmOpen = false; container.replaceChildren(); } }),
            ]));
          }

          async function askReplay(group, hours) {
            const panel = document.getElementById('replay-panel');
            const body = { miniAppId: group.miniAppId, outcome: group.outcome, reason: group.reason, hours: Number(hours) || 24 };
            try {
              const dry = await api('/api/admin/console/failures/replay', { method: 'POST', body: JSON.stringify(Object.assign({ dryRun: true }, body)) });
              confirmPanel(panel, 'Dry run: ' + dry.replayed + ' of ' + dry.matched + ' ' + group.outcome + ' deliveries of '
                + group.miniAppId + ' would be replayed (the rest skip: invalid token, opted out, device removed, already replayed'
                + ' or a revoked partner\u2019s: ' + dry.skipped.partnerRevoked + ').',
                'Replay ' + dry.replayed, async () => {
                  const done = await api('/api/admin/console/failures/replay', { method: 'POST', body: JSON.stringify(Object.assign({ dryRun: false }, body)) });
                  panel.replaceChildren(el('p', { id: 'replay-result', text: 'Replayed ' + done.replayed + ' of ' + done.matched + ' into the bulk lane.' }));
                  refresh();
                });
            } catch (e) { panel.replaceChildren(el('p', { class: 'error', text: e.message })); }
          }

          async function askWebhook(event, hours) {
            const panel = document.getElementById('webhook-panel');
            const body = { eventId: event.id, hours: Number(hours) || 24 };
            try {
              const dry = await api('/api/admin/console/webhooks/replay', { method: 'POST', body: JSON.stringify(Object.assign({ dryRun: true }, body)) });
              confirmPanel(panel, 'Send the ' + event.type + ' event of ' + event.miniAppId + ' again (a new 24-hour window)? '
                + dry.replayable + ' of ' + dry.matched + ' can be sent (a partner without a webhook now cannot).',
                'Send again', async () => {
                  const done = await api('/api/admin/console/webhooks/replay', { method: 'POST', body: JSON.stringify(Object.assign({ dryRun: false }, body)) });
                  panel.replaceChildren(el('p', { id: 'webhook-result', text: 'Queued ' + done.replayed + ' event(s) again.' }));
                  refresh();
                });
            } catch (e) { panel.replaceChildren(el('p', { class: 'error', text: e.message })); }
          }

          // One call the operator confirms; the panel then says what it did.
          function confirmCall(panel, message, actionText, path, method, done) {
            confirmPanel(panel, message, actionText, async () => {
              await api(path, { method });
              panel.replaceChildren(el('p', { text: done }));
              refresh();
            });
          }

          function askPartner(partner, what) {
            const panel = document.getElementById('partner-panel');
            const path = '/api/admin/mini-app-partners/' + encodeURIComponent(partner.id);
            if (what === 'revoke') {
              confirmCall(panel, 'Revoke ' + partner.miniAppId + '? Its key stops working within seconds,'
                + ' nothing it queued is sent, and its Live Activities end now; this cannot be undone.',
                'Revoke', path, 'DELETE', partner.miniAppId + ' revoked.');
            } else if (what === 'suspend' || what === 'resume') {
              const suspend = what === 'suspend';
              confirmCall(panel, suspend
                ? 'Suspend ' + partner.miniAppId + '? Its key is refused within seconds and nothing of it is sent;'
                  + ' its queue waits (past its TTL, it expires) until you resume it.'
                : 'Resume ' + partner.miniAppId + '? Its key works again and what it queued is sent if still within its TTL.',
                suspend ? 'Suspend' : 'Resume', path + '/' + what, 'POST',
                partner.miniAppId + (suspend ? ' suspended.' : ' resumed.'));
            } else if (what === 'end-previous') {
              confirmCall(panel, 'End the previous key of ' + partner.miniAppId
                + '? It stops working within seconds; the current key goes on.',
                'End previous key', path + '/previous-key', 'DELETE',
                'The previous key of ' + partner.miniAppId + ' is refused from now on.');
            } else if (what === 'end-previous-webhook-secret') {
              confirmCall(panel, 'End the previous webhook secret of ' + partner.miniAppId
                + '? Webhooks are signed with the current secret only from now on.',
                'End previous webhook secret', path + '/previous-webhook-secret', 'DELETE',
                'Webhooks of ' + partner.miniAppId + ' are signed with the current secret only.');
            } else if (what === 'rotate-webhook-secret') {
              const overlap = el('select', { id: 'rotate-secret-overlap' }, [['0', 'at once (a leaked secret)'],
                ['3600', 'in 1 hour'], ['86400', 'in 24 hours'], ['604800', 'in 7 days']]
                .map(([value, text]) => el('option', { value, text })));
              confirmPanel(panel, 'Rotate the webhook secret of ' + partner.miniAppId
                + '? Webhooks are signed with the new secret; the old one stops signing:',
                'Rotate webhook secret', async () => {
                  const r = await api(path + '/rotate-webhook-secret', { method: 'POST',
                    body: JSON.stringify({ previousSecretValidSeconds: Number(overlap.value) }) });
                  panel.replaceChildren(el('div', { class: 'confirm' }, [
                    el('p', { text: 'New webhook secret for ' + partner.miniAppId + ', shown this once:' }),
                    el('code', { id: 'new-webhook-secret', text: r.webhookSecret || '' }),
                    el('p', { id: 'previous-webhook-secret-state', text: r.previousWebhookSecretExpiresAt
                      ? 'Webhooks carry a signature with the old secret too until '
                        + new Date(r.previousWebhookSecretExpiresAt).toLocaleString() + '.'
                      : 'The old secret signs nothing from now on.' }),
                    el('button', { type: 'button', id: 'webhook-secret-done', text: 'Done', onclick: () => {
                      state.confirmOpen = false; panel.replaceChildren(); refresh(); } })]));
                  return 'keep';
                }, el('p', {}, [
                  el('label', { for: 'rotate-secret-overlap', text: 'The old secret stops ' }), overlap]));
            } else {
              const overlap = el('select', { id: 'rotate-overlap' }, [['0', 'at once (a leaked key)'],
                ['3600', 'in 1 hour'], ['86400', 'in 24 hours'], ['604800', 'in 7 days']]
                .map(([value, text]) => el('option', { value, text })));
              confirmPanel(panel, 'Rotate the API key of ' + partner.miniAppId + '? The old key stops working:',
                'Rotate key', async () => {
                  const r = await api(path + '/rotate-key', { method: 'POST',
                    body: JSON.stringify({ previousKeyValidSeconds: Number(overlap.value) }) });
                  panel.replaceChildren(el('div', { class: 'confirm' }, [
                    el('p', { text: 'New key for ' + partner.miniAppId + ', shown this once:' }),
                    el('code', { id: 'new-key', text: r.apiKey || '' }),
                    el('p', { id: 'previous-key-state', text: r.previousKeyExpiresAt
                      ? 'The old key works until ' + new Date(r.previousKeyExpiresAt).toLocaleString() + '.'
                      : 'The old key is refused from now on.' }),
                    el('button', { type: 'button', id: 'key-done', text: 'Done', onclick: () => {
                      state.confirmOpen = false; panel.replaceChildren(); refresh(); } })]));
                  return 'keep';
                }, el('p', {}, [el('label', { for: 'rotate-overlap', text: 'The old key stops ' }), overlap]));
            }
          }

          async function refresh() {
            const { page, params } = parseHash();
            const render = pages[page];
            for (const a of document.querySelectorAll('#nav a')) a.classList.toggle('active', a.dataset.page === page);
            const main = document.getElementById('main');
            if (!render) { main.replaceChildren(el('p', { class: 'error', text: 'No such page.' })); return; }
            // A confirmation waiting for an answer is not swept away by the poll.
            if (state.confirmOpen && page === state.page) return;
            try {
              const nodes = await render(params);
              // Keep what the operator is typing in a filter.
              const focused = document.activeElement && document.activeElement.form ? document.activeElement.id : null;
              if (focused && page === state.page && String(params) === String(state.params)) return;
              state.page = page;
              state.params = params;
              main.replaceChildren(...nodes);
              document.getElementById('status').textContent = 'Updated ' + new Date().toLocaleTimeString() + ', every 5 s.';
            } catch (e) {
              if (e.message !== 'signed out') document.getElementById('status').textContent = 'Error: ' + e.message;
              if (page !== state.page) main.replaceChildren(el('p', { class: 'error', text: e.message }));
            }
          }

          async function poll() {
            state.polling = true;
            try { await refresh(); } finally { state.polling = false; }
          }

          async function start() {
            const session = await api('/api/admin/console/session');
            state.csrf = session.csrfToken;
            document.getElementById('signout').addEventListener('click', async () => {
              await api('/api/admin/console/sign-out', { method: 'POST' });
              window.location.assign('/console/login');
            });
            window.addEventListener('hashchange', () => { state.confirmOpen = false; refresh(); });
            await refresh();
            state.timer = window.setInterval(poll, POLL_MS);
          }

          document.addEventListener('DOMContentLoaded', () => { start().catch(() => {}); });
        })();
        """#
}
