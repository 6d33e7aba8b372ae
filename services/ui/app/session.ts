/** The signed-in API key lives in sessionStorage: gone when the tab closes, never in the URL. */
const KEY = 'weft.apiKey';

export function getKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function setKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function clearKey(): void {
  sessionStorage.removeItem(KEY);
}
