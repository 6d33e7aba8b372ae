import { readFileSync } from 'node:fs';

/**
 * The emoji names a reaction's payload carries (as the reference's): generated from the
 * Python `emoji` package by scripts/emoji-names.py, read once at the first reaction.
 */
interface EmojiNames {
  alias: Record<string, string>;
  detoned: Record<string, string>;
}
let names: EmojiNames | undefined;
const emojiNames = (): EmojiNames =>
  (names ??= JSON.parse(readFileSync(new URL('./emoji-names.json', import.meta.url), 'utf8')) as EmojiNames);

/** `emoji.demojize` of one emoji: its shortcode (`:thumbs_up:`), or the text itself when it has none. */
const aliasOf = (emoji: string): string => emojiNames().alias[emoji] ?? emoji;

/**
 * A `wandb.reaction.1` payload with the names the reference adds: `alias` (the emoji's
 * shortcode), `detoned` (the emoji without a skin tone) and `detoned_alias` (its shortcode),
 * so reactions group by emoji whatever the tone.
 */
export function normalizeReaction(payload: Record<string, unknown>): Record<string, unknown> {
  const emoji = payload.emoji as string;
  const detoned = emojiNames().detoned[emoji] ?? emoji;
  return { ...payload, alias: aliasOf(emoji), detoned, detoned_alias: aliasOf(detoned) };
}
