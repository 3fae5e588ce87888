/** `/jobs`: Batch jobs (`GET /v1/jobs`), filtered by status and category, newest first, a page at a time. */
import { useState } from 'preact/hooks';
import type { PageProps } from '../page.ts';
import { filterSelects } from '../components/filter-select.tsx';
import { useLoad } from '../components/use-load.ts';
import { ErrorPanel, Loading } from '../components/page-state.tsx';
import { DataTable } from '../components/data-table.tsx';
import { Pager, useCursorPager } from '../components/pager.tsx';
import { Badge } from '../components/badge.tsx';
import { RelativeTime } from '../components/relative-time.tsx';
import { formatUsd } from '../components/format.ts';

interface Job {
  jobId: string;
  name: string;
  category: string;
  status: string;
  runId?: string;
  queue?: string;
  createdAt?: number;
  startedAt?: number;
  stoppedAt?: number;
  gpus: number;
  vcpus: number;
  costUsd?: number;
}

const STATUSES = ['SUBMITTED', 'PENDING', 'RUNNABLE', 'STARTING', 'RUNNING', 'SUCCEEDED', 'FAILED'];
const CATEGORIES = ['inference', 'training', 'data-and-reward', 'evaluation', 'research'];
const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/** How long a job ran: `4 min`, `2.5 h`; running jobs count to now. */
export function ranFor(job: Pick<Job, 'startedAt' | 'stoppedAt'>, now = Date.now()): string | undefined {
  if (job.startedAt === undefined) return undefined;
  const s = ((job.stoppedAt ?? now) - job.startedAt) / 1000;
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 360) / 10} h`;
}

export function JobsPage(props: PageProps) {
  const [filters, setFilters] = useState({ status: props.query.get('status') ?? '', category: props.query.get('category') ?? '' });
  // A stall notice links to `/jobs?run=<id>`: that run's jobs.
  const run = props.query.get('run') ?? undefined;
  const pager = useCursorPager([filters]);
  const page = useLoad(
    () => props.api.get<{ jobs: Job[]; nextCursor?: string }>('/v1/jobs', { status: filters.status || undefined, category: filters.category || undefined, run, limit: 50, cursor: pager.cursor }),
    [filters, run, pager.cursor],
  );
  const select = filterSelects(filters, setFilters);
  return (
    <div>
      <h1>Jobs</h1>
      <div class="filters">
        {select('status', STATUSES)}
        {select('category', CATEGORIES)}
      </div>
      {page.loading && !page.value ? <Loading what="jobs" /> : null}
      {page.error ? <ErrorPanel error={page.error} onRetry={page.reload} /> : null}
      {page.value ? (
        <>
          <DataTable
            rows={page.value.jobs}
            rowKey={(j) => j.jobId}
            empty="No jobs match."
            columns={[
              { key: 'name', label: 'Job', value: (j) => j.name },
              { key: 'status', label: 'Status', value: (j) => j.status, render: (j) => <Badge status={j.status.toLowerCase()} /> },
              { key: 'category', label: 'Category', value: (j) => j.category },
              { key: 'run', label: 'Run', value: (j) => j.runId },
              { key: 'created', label: 'Created', value: (j) => j.createdAt, render: (j) => <RelativeTime iso={iso(j.createdAt)} /> },
              { key: 'ran', label: 'Ran for', value: (j) => (j.startedAt === undefined ? undefined : (j.stoppedAt ?? Date.now()) - j.startedAt), render: (j) => ranFor(j) ?? '—' },
              { key: 'gpus', label: 'GPUs', numeric: true, value: (j) => j.gpus },
              { key: 'vcpus', label: 'vCPUs', numeric: true, value: (j) => j.vcpus },
              { key: 'cost', label: 'Cost', numeric: true, value: (j) => j.costUsd, render: (j) => formatUsd(j.costUsd) },
            ]}
          />
          <Pager pager={pager} next={page.value.nextCursor} />
        </>
      ) : null}
    </div>
  );
}
