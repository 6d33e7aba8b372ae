import { describe, expect, it } from 'vitest';
import { normalizeReaction } from '../src/reactions';

// Expected values as the reference computes them (the Python `emoji` package).
describe('a reaction payload as the reference stores it', () => {
  it('adds the alias, the emoji without skin tone and its alias', () => {
    expect(normalizeReaction({ emoji: '👍' })).toEqual({ emoji: '👍', alias: ':thumbs_up:', detoned: '👍', detoned_alias: ':thumbs_up:' });
    expect(normalizeReaction({ emoji: '👍🏽', extra: 1 })).toEqual({
      emoji: '👍🏽',
      extra: 1,
      alias: ':thumbs_up_medium_skin_tone:',
      detoned: '👍',
      detoned_alias: ':thumbs_up:',
    });
    expect(normalizeReaction({ emoji: '🇺🇸' })).toMatchObject({ alias: ':United_States:', detoned: '🇺🇸' });
    // An unqualified heart (no variation selector) detones to the fully qualified one, as emoji.emojize gives.
    expect(normalizeReaction({ emoji: '❤' })).toMatchObject({ alias: ':red_heart:', detoned: '❤️', detoned_alias: ':red_heart:' });
  });
});
