import { INCIDENT_SEVERITIES, INCIDENT_STATUSES, type IncidentServiceState } from '../task/behaviour-schema.ts';

/**
 * A fake metrics and incident service with the state a task scripts: metric series to query, incidents to list, read
 * and update (status, severity, a note). Updates change the state the judge sees at the end (`state()`).
 *
 * @example
 * const svc = new IncidentService(task.behaviour.services.incidents, () => new Date());
 * svc.query({ name: 'http_5xx_rate', from: '2026-12-03T10:00:00Z' }); // series with min/max/avg/last
 * svc.update({ id: 'INC-7', status: 'acknowledged', note: 'Rolling back 4f2a.' });
 */
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];
export type IncidentSeverity = (typeof INCIDENT_SEVERITIES)[number];
export type Incident = IncidentServiceState['incidents'][number];
export type MetricSeries = IncidentServiceState['metrics'][number];

export type ServiceResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** Points returned per series at most (the rest is summarised by the statistics). */
export const MAX_POINTS_RETURNED = 500;

export class IncidentService {
  readonly #metrics: MetricSeries[];
  readonly #incidents: Incident[];
  readonly #now: () => Date;
  readonly #author: string;

  constructor(config: IncidentServiceState, now: () => Date = () => new Date(), author = 'flywheel-agent') {
    this.#metrics = structuredClone(config.metrics);
    this.#incidents = structuredClone(config.incidents);
    this.#now = now;
    this.#author = author;
  }

  listMetrics(): Array<{ name: string; labels: Record<string, string>; unit?: string; points: number; from: string; to: string }> {
    return this.#metrics.map((m) => ({ name: m.name, labels: m.labels, ...(m.unit ? { unit: m.unit } : {}), points: m.points.length, from: m.points[0]!.at, to: m.points.at(-1)!.at }));
  }

  query(q: { name: string; labels?: Record<string, string>; from?: string; to?: string }): ServiceResult<unknown[]> {
    const from = q.from === undefined ? -Infinity : Date.parse(q.from);
    const to = q.to === undefined ? Infinity : Date.parse(q.to);
    if (Number.isNaN(from) || Number.isNaN(to)) return { ok: false, error: 'from and to are ISO 8601 date-times' };
    const series = this.#metrics.filter((m) => m.name === q.name && Object.entries(q.labels ?? {}).every(([k, v]) => m.labels[k] === v));
    if (series.length === 0) {
      const names = [...new Set(this.#metrics.map((m) => m.name))];
      return { ok: false, error: `no series ${q.name}${q.labels ? ` with labels ${JSON.stringify(q.labels)}` : ''}; metrics: ${names.join(', ') || 'none'}` };
    }
    return {
      ok: true,
      value: series.map((m) => {
        const points = m.points.filter((p) => Date.parse(p.at) >= from && Date.parse(p.at) <= to);
        const values = points.map((p) => p.value);
        const stats =
          values.length === 0
            ? null
            : { min: Math.min(...values), max: Math.max(...values), avg: Math.round((values.reduce((a, b) => a + b, 0) / values.length) * 1e6) / 1e6, last: values.at(-1)! };
        return { name: m.name, labels: m.labels, ...(m.unit ? { unit: m.unit } : {}), stats, points: points.slice(-MAX_POINTS_RETURNED), ...(points.length > MAX_POINTS_RETURNED ? { omitted: points.length - MAX_POINTS_RETURNED } : {}) };
      }),
    };
  }

  list(status?: IncidentStatus): Array<Pick<Incident, 'id' | 'title' | 'status' | 'severity' | 'openedAt'> & { service?: string }> {
    return this.#incidents
      .filter((i) => status === undefined || i.status === status)
      .map((i) => ({ id: i.id, title: i.title, status: i.status, severity: i.severity, openedAt: i.openedAt, ...(i.service ? { service: i.service } : {}) }));
  }

  get(id: string): ServiceResult<Incident> {
    const incident = this.#incidents.find((i) => i.id === id);
    return incident ? { ok: true, value: structuredClone(incident) } : { ok: false, error: `no incident ${id}; incidents: ${this.#incidents.map((i) => i.id).join(', ') || 'none'}` };
  }

  update(u: { id: string; status?: IncidentStatus; severity?: IncidentSeverity; note?: string }): ServiceResult<Incident> {
    const incident = this.#incidents.find((i) => i.id === u.id);
    if (!incident) return { ok: false, error: `no incident ${u.id}; incidents: ${this.#incidents.map((i) => i.id).join(', ') || 'none'}` };
    if (u.status === undefined && u.severity === undefined && u.note === undefined) return { ok: false, error: 'nothing to update: give status, severity or note' };
    if (u.status !== undefined) incident.status = u.status;
    if (u.severity !== undefined) incident.severity = u.severity;
    if (u.note !== undefined) incident.notes.push({ at: this.#now().toISOString(), author: this.#author, text: u.note });
    return { ok: true, value: structuredClone(incident) };
  }

  state(): { metrics: Array<{ name: string; labels: Record<string, string> }>; incidents: Incident[] } {
    return { metrics: this.#metrics.map((m) => ({ name: m.name, labels: m.labels })), incidents: structuredClone(this.#incidents) };
  }
}
