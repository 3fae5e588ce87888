/**
 * `/`: the loop at a glance (`GET /v1/overview`): feedback in the last day and week, open failure modes and the review
 * queue, checkpoints and the incumbent, sweeps, suites, training runs, experiments and notices, each linking to its
 * page. A part the overview does not carry is left out; a deployment without the route says so.
 */
import type { ComponentChildren } from 'preact';
import type { PageProps } from '../page.ts';
import { useLoad } from '../components/use-load.ts';
import { ErrorPanel, Loading } from '../components/page-state.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Badge } from '../components/badge.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { formatNumber, formatPercent } from '../components/format.ts';
import { pathTo } from '../router.ts';

interface FeedbackWindow {
  events: number;
  up: number;
  down: number;
  negativeShare: number | null;
}
interface RunRow {
  runId: string;
  status: string;
  createdAt: string;
  step?: number;
}
interface SweepRow {
  sweepId: string;
  status: string;
  requestedAt: string;
  finishedAt?: string;
}
/** `GET /v1/overview` (lib/overview/schemas.ts); every part optional here, so a smaller overview still shows. */
export interface LoopOverview {
  generatedAt?: string;
  feedback?: { last24h: FeedbackWindow; last7d: FeedbackWindow };
  failureModes?: { open: number; top: Array<{ mode: string; count: number }>; pendingReview: number; pendingReviewCapped: boolean };
  checkpoints?: { total: number; totalCapped: boolean; incumbent: { checkpoint: string; since: string } | null; latest: { id: string; model: string; registeredAt: string } | null };
  sweeps?: { running: SweepRow[]; recent: SweepRow[] };
  suites?: { active: number; saturated: number };
  trainingRuns?: { running: RunRow[]; recent: RunRow[] };
  experiments?: { running: Array<{ experimentId: string; name: string; startedAt?: string }> };
  notices?: { open?: number; decisions?: number; recent?: Array<{ noticeId: string; kind: string; severity: string; title: string; createdAt: string }> };
}

function Stat(props: { label: string; children: ComponentChildren; href?: string }) {
  return (
    <div class="stat">
      <div class="stat-value">{props.href ? <a href={`#${props.href}`}>{props.children}</a> : props.children}</div>
      <div class="stat-label">{props.label}</div>
    </div>
  );
}

const capped = (n: number, isCapped: boolean) => `${formatNumber(n)}${isCapped ? '+' : ''}`;

export function OverviewPage(props: PageProps) {
  const overview = useLoad(() => props.api.get<LoopOverview>('/v1/overview'), []);
  const o = overview.value;
  return (
    <div>
      <h1>Overview</h1>
      {overview.loading && !o ? <Loading what="the overview" /> : null}
      {overview.error ? <ErrorPanel error={overview.error} onRetry={overview.reload} /> : null}
      {o ? (
        <>
          {o.generatedAt ? (
            <p class="muted">
              As of <RelativeTime iso={o.generatedAt} />.
            </p>
          ) : null}
          {o.feedback ? (
            <section class="section">
              <h2>Feedback</h2>
              <div class="stats">
                <Stat label="events, last 24 h" href="/feedback">
                  {formatNumber(o.feedback.last24h.events)}
                </Stat>
                <Stat label="thumbs down, last 24 h">{formatPercent(o.feedback.last24h.negativeShare)}</Stat>
                <Stat label="events, last 7 days" href="/feedback">
                  {formatNumber(o.feedback.last7d.events)}
                </Stat>
                <Stat label="thumbs down, last 7 days">{formatPercent(o.feedback.last7d.negativeShare)}</Stat>
              </div>
            </section>
          ) : null}
          {o.failureModes ? (
            <section class="section">
              <h2>Failure modes</h2>
              <div class="stats">
                <Stat label="modes seen, last 7 days" href="/failure-modes">
                  {formatNumber(o.failureModes.open)}
                </Stat>
                <Stat label="waiting for review" href="/review">
                  {capped(o.failureModes.pendingReview, o.failureModes.pendingReviewCapped)}
                </Stat>
              </div>
              <DataTable
                rows={o.failureModes.top}
                rowKey={(m) => m.mode}
                empty="No failure modes in the last 7 days."
                columns={[
                  { key: 'mode', label: 'Most frequent modes', value: (m) => m.mode },
                  { key: 'count', label: 'Signals', numeric: true, value: (m) => m.count },
                ]}
              />
            </section>
          ) : null}
          {o.checkpoints || o.suites ? (
            <section class="section">
              <h2>Checkpoints and suites</h2>
              <div class="stats">
                {o.checkpoints ? <Stat label="checkpoints">{capped(o.checkpoints.total, o.checkpoints.totalCapped)}</Stat> : null}
                {o.checkpoints ? <Stat label="incumbent">{o.checkpoints.incumbent?.checkpoint ?? <span class="muted">none</span>}</Stat> : null}
                {o.checkpoints ? <Stat label="latest registered">{o.checkpoints.latest?.id ?? <span class="muted">none</span>}</Stat> : null}
                {o.suites ? (
                  <Stat label="active suites" href="/suites">
                    {formatNumber(o.suites.active)}
                  </Stat>
                ) : null}
                {o.suites ? <Stat label="saturated suites">{formatNumber(o.suites.saturated)}</Stat> : null}
              </div>
            </section>
          ) : null}
          {o.sweeps ? (
            <section class="section">
              <h2>Sweeps</h2>
              <DataTable
                rows={[...o.sweeps.running, ...o.sweeps.recent.filter((r) => !o.sweeps!.running.some((s) => s.sweepId === r.sweepId))]}
                rowKey={(s) => s.sweepId}
                empty="No sweeps yet."
                columns={[
                  { key: 'sweepId', label: 'Sweep', value: (s) => s.sweepId },
                  { key: 'status', label: 'Status', value: (s) => s.status, render: (s) => <Badge status={s.status} /> },
                  { key: 'requestedAt', label: 'Requested', value: (s) => s.requestedAt },
                  { key: 'finishedAt', label: 'Finished', value: (s) => s.finishedAt },
                ]}
              />
            </section>
          ) : null}
          {o.trainingRuns ? (
            <section class="section">
              <h2>Training runs</h2>
              <DataTable
                rows={[...o.trainingRuns.running, ...o.trainingRuns.recent.filter((r) => !o.trainingRuns!.running.some((s) => s.runId === r.runId))]}
                rowKey={(r) => r.runId}
                onRowClick={(r) => props.navigate(pathTo('/training/:id', { id: r.runId }))}
                empty="No training runs yet."
                columns={[
                  { key: 'runId', label: 'Run', value: (r) => r.runId },
                  { key: 'status', label: 'Status', value: (r) => r.status, render: (r) => <Badge status={r.status} /> },
                  { key: 'step', label: 'Step', numeric: true, value: (r) => r.step },
                  { key: 'createdAt', label: 'Created', value: (r) => r.createdAt },
                ]}
              />
            </section>
          ) : null}
          {o.experiments ? (
            <section class="section">
              <h2>Experiments running</h2>
              <DataTable
                rows={o.experiments.running}
                rowKey={(e) => e.experimentId}
                onRowClick={(e) => props.navigate(pathTo('/experiments/:id', { id: e.experimentId }))}
                empty="No experiment is running."
                columns={[
                  { key: 'name', label: 'Experiment', value: (e) => e.name },
                  { key: 'id', label: 'Id', value: (e) => e.experimentId },
                  { key: 'startedAt', label: 'Started', value: (e) => e.startedAt },
                ]}
              />
            </section>
          ) : null}
          {o.notices && o.notices.open !== undefined ? (
            <section class="section">
              <h2>Notices</h2>
              <div class="stats">
                <Stat label="open" href="/notices?status=open">
                  {formatNumber(o.notices.open)}
                </Stat>
                <Stat label="asking for a decision" href="/notices?status=open">
                  {formatNumber(o.notices.decisions ?? 0)}
                </Stat>
              </div>
              <DataTable
                rows={o.notices.recent ?? []}
                rowKey={(n) => n.noticeId}
                onRowClick={() => props.navigate('/notices')}
                empty="No notices."
                columns={[
                  { key: 'severity', label: 'Severity', value: (n) => n.severity, render: (n) => <Badge status={n.severity} /> },
                  { key: 'title', label: 'Notice', wide: true, value: (n) => n.title },
                  { key: 'kind', label: 'Kind', value: (n) => n.kind },
                  { key: 'createdAt', label: 'Raised', value: (n) => n.createdAt },
                ]}
              />
            </section>
          ) : null}
        </>
      ) : null}
    </div>
  );
}
