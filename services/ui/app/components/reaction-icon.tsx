import { THUMBS_DOWN, THUMBS_UP } from '../feedback';

/**
 * A reaction as an icon: thumbs drawn inline (they must show on machines without an emoji
 * font, as headless browsers and many Linux desktops are), any other emoji as its text.
 */
export function ReactionIcon({ emoji }: { emoji: string }) {
  if (emoji !== THUMBS_UP && emoji !== THUMBS_DOWN) return <span class="reaction">{emoji}</span>;
  return (
    <svg
      class="reaction-icon"
      viewBox="0 0 24 24"
      width="16"
      height="16"
      role="img"
      style={emoji === THUMBS_DOWN ? { transform: 'scaleY(-1)' } : undefined}
    >
      {/* The emoji as the icon's name: its tooltip, what screen readers say, its text when copied. */}
      <title>{emoji}</title>
      <path
        d="M7 10v10H4V10h3zm2 10V10l4.2-7c1.3 0 2.3 1.2 2 2.5L14.6 9H19a2 2 0 0 1 2 2.3l-1.3 7A2 2 0 0 1 17.7 20H9z"
        fill="currentColor"
      />
    </svg>
  );
}

/** A note, drawn inline too. */
export function NoteIcon() {
  return (
    <svg class="reaction-icon" viewBox="0 0 24 24" width="15" height="15" role="img">
      <title>note</title>
      <path d="M5 3h10l4 4v14H5V3zm9 1.5V8h3.5M8 12h8M8 15.5h8M8 19h5" fill="none" stroke="currentColor" stroke-width="1.6" />
    </svg>
  );
}
