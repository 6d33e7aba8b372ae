export declare const REPO_ROOT: string;
export declare const DIST_DIR: string;
export declare function sourcesHash(): string;
export declare function buildIsFresh(): boolean;
export declare function stampOf(sources: string): { path: string; body: string };
