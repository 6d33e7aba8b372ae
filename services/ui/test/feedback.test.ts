import { describe, expect, it } from 'vitest';
import { feedbackCounts, feedbackSummary } from '../app/feedback';
import type { Feedback } from '../app/types';

describe("the calls table's Feedback column (issue 53, item 4)", () => {
  const f = (feedback_type: string, payload: Record<string, unknown> = {}) => ({ feedback_type, payload }) as unknown as Feedback;

  it('counts scorer results (monitors, apply_scorer: wandb.runnable.*), which the "any feedback" filter finds', () => {
    const list = [
      f('wandb.reaction.1', { emoji: '👍' }),
      f('wandb.annotation.quality', { value: 4 }),
      f('wandb.runnable.judge', { output: { passed: true } }),
      f('wandb.runnable.length', { output: 12 }),
    ];
    expect(feedbackCounts(list)).toEqual({ reactions: [['👍', 1]], notes: 0, scores: 1, results: 2 });
    expect(feedbackSummary(list)).toBe('👍1 ★1 ⚖2');
    expect(feedbackSummary([f('wandb.runnable.judge')])).toBe('⚖1');
  });
});
