/**
 * A model-suggested name for a candidate mode, through the models port (the judge model, when one is configured):
 * one tool call with the cluster's top terms and a few consented member texts. An answer that is not valid (no tool
 * call, bad JSON, an id that is not kebab-case) keeps the name made from the top terms; a model that fails keeps it
 * too (naming is a convenience, clustering never fails for it).
 */
import { z } from 'zod';
import type { ModelsPort } from '../../ports/models.ts';
import { ModeId } from '../taxonomy/taxonomy.ts';

export const NAME_TOOL = 'name_failure_mode';
/** Member texts shown to the model. */
const SHOWN = 6;

const Named = z.strictObject({ name: z.string().min(1).max(120), id: ModeId });

/**
 * @example
 * const named = await nameClusterWithModel(judge, { topTerms: ['emoji', 'commit'], texts: ['no emoji in commits'] });
 * // { name: 'Emoji in commit messages', id: 'emoji-commit-messages' } or undefined
 */
export async function nameClusterWithModel(model: ModelsPort, cluster: { topTerms: string[]; texts: string[] }): Promise<{ name: string; id: string } | undefined> {
  try {
    const reply = await model.chat({
      messages: [
        { role: 'system', content: `You name a recurring complaint about an AI coding agent as a failure mode. Answer only by calling ${NAME_TOOL}.` },
        {
          role: 'user',
          content: `Top terms: ${cluster.topTerms.join(', ')}\nComplaints:\n${cluster.texts.slice(0, SHOWN).map((t, i) => `${i + 1}. ${t.slice(0, 500)}`).join('\n')}`,
        },
      ],
      tools: [
        {
          name: NAME_TOOL,
          description: 'Name the failure mode these complaints share.',
          parameters: {
            type: 'object',
            required: ['name', 'id'],
            properties: {
              name: { type: 'string', description: 'A short human name, e.g. "Emoji in commit messages".' },
              id: { type: 'string', description: 'A kebab-case id, e.g. "emoji-commit-messages".' },
            },
          },
        },
      ],
      sampling: { temperature: 0 },
      returnTokens: false,
    });
    const raw = reply.message.toolCalls[0]?.arguments ?? reply.message.content;
    const parsed = Named.safeParse(JSON.parse(raw));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
