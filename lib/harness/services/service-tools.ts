import { z } from 'zod';
import type { AgentTool, ToolOutcome } from '../agent/agent-tools.ts';
import { INCIDENT_SEVERITIES, INCIDENT_STATUSES, type ServiceName, type ServicesConfig } from '../task/behaviour-schema.ts';
import { ChatWorkspace, type ChatWorkspaceSnapshot } from './chat-workspace.ts';
import { IncidentService } from './incident-service.ts';

/**
 * The fake external services of a behavioural case as agent tools: the chat workspace (`chat_list_channels`,
 * `chat_read`, `chat_post`) and the metrics and incident service (`metrics_list`, `metrics_query`, `incidents_list`,
 * `incident_get`, `incident_update`). Results are JSON text; a bad request (an unknown channel, incident or metric)
 * is a tool error naming what exists. Each tool carries its `service`, so the agent loop records every call as a
 * `service.call` event; `states()` is each service's state at the end, for the judge.
 *
 * @example
 * const services = createServices(task.behaviour.services, now);
 * const tools = [...DEFAULT_TOOLS, ...services.tools];
 * // after the attempt
 * services.states(); // { chat: { channels: [...] }, incidents: { incidents: [...] } }
 */
export interface Services {
  tools: AgentTool[];
  states(): Partial<Record<ServiceName, unknown>>;
}

const json = (value: unknown): ToolOutcome => ({ content: JSON.stringify(value, null, 1), isError: false });
const fail = (error: string): ToolOutcome => ({ content: `Error: ${error}`, isError: true });

function tool<S extends z.ZodType>(service: ServiceName, name: string, description: string, schema: S, run: (args: z.infer<S>) => ToolOutcome): AgentTool {
  return { name, description, schema, service, run: async (args) => run(args as z.infer<S>) } as AgentTool;
}

function chatTools(chat: ChatWorkspace): AgentTool[] {
  return [
    tool('chat', 'chat_list_channels', 'List the chat workspace\'s channels (name, topic, message count).', z.object({}).strict(), () => json(chat.listChannels())),
    tool(
      'chat',
      'chat_read',
      'Read the latest messages of a chat channel (oldest first), or of one thread.',
      z.object({ channel: z.string().min(1), limit: z.number().int().min(1).max(200).default(50), threadId: z.string().min(1).optional().describe('The id of the message that starts the thread') }).strict(),
      (a: { channel: string; limit: number; threadId?: string }) => {
        const r = chat.read(a.channel, { limit: a.limit, ...(a.threadId !== undefined ? { threadId: a.threadId } : {}) });
        return r.ok ? json(r.value) : fail(r.error);
      },
    ),
    tool(
      'chat',
      'chat_post',
      'Post a message to a chat channel (optionally as a reply in a thread). Returns the message and any replies it got.',
      z.object({ channel: z.string().min(1), text: z.string().min(1).max(8000), threadId: z.string().min(1).optional() }).strict(),
      (a: { channel: string; text: string; threadId?: string }) => {
        const r = chat.post(a.channel, a.text, a.threadId);
        return r.ok ? json(r.value) : fail(r.error);
      },
    ),
  ];
}

function incidentTools(svc: IncidentService): AgentTool[] {
  return [
    tool('incidents', 'metrics_list', 'List the monitoring metrics (name, labels, unit, time range).', z.object({}).strict(), () => json(svc.listMetrics())),
    tool(
      'incidents',
      'metrics_query',
      'Query a metric\'s series in a time range (ISO 8601); returns the points and min/max/avg/last.',
      z.object({ name: z.string().min(1), labels: z.record(z.string(), z.string()).optional(), from: z.string().optional(), to: z.string().optional() }).strict(),
      (a: { name: string; labels?: Record<string, string>; from?: string; to?: string }) => {
        const r = svc.query(a);
        return r.ok ? json(r.value) : fail(r.error);
      },
    ),
    tool('incidents', 'incidents_list', 'List incidents, optionally of one status.', z.object({ status: z.enum(INCIDENT_STATUSES).optional() }).strict(), (a: { status?: (typeof INCIDENT_STATUSES)[number] }) =>
      json(svc.list(a.status)),
    ),
    tool('incidents', 'incident_get', 'Read one incident with its notes.', z.object({ id: z.string().min(1) }).strict(), (a: { id: string }) => {
      const r = svc.get(a.id);
      return r.ok ? json(r.value) : fail(r.error);
    }),
    tool(
      'incidents',
      'incident_update',
      'Update an incident: its status (open, acknowledged, mitigated, resolved), its severity (sev1..sev4), and/or add a note.',
      z.object({ id: z.string().min(1), status: z.enum(INCIDENT_STATUSES).optional(), severity: z.enum(INCIDENT_SEVERITIES).optional(), note: z.string().min(1).max(8000).optional() }).strict(),
      (a: { id: string; status?: (typeof INCIDENT_STATUSES)[number]; severity?: (typeof INCIDENT_SEVERITIES)[number]; note?: string }) => {
        const r = svc.update(a);
        return r.ok ? json(r.value) : fail(r.error);
      },
    ),
  ];
}

/** The services a task configures, as tools, with their state; none configured: no tools. */
export function createServices(config: ServicesConfig | undefined, now: () => Date = () => new Date()): Services {
  const chat = config?.chat ? new ChatWorkspace(config.chat, now) : undefined;
  const incidents = config?.incidents ? new IncidentService(config.incidents, now, config.chat?.me) : undefined;
  return {
    tools: [...(chat ? chatTools(chat) : []), ...(incidents ? incidentTools(incidents) : [])],
    states: () => ({ ...(chat ? { chat: chat.state() satisfies ChatWorkspaceSnapshot } : {}), ...(incidents ? { incidents: incidents.state() } : {}) }),
  };
}
