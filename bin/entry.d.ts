/** Types of entry.js (plain JavaScript, so the binary needs no loader to choose its loader). */
export declare const BUILD_STAMP: string;
export declare const ROOT: string;
export declare function newestMtimeMs(dir: string): number;
export declare function chooseEntry(root: string, env: Record<string, string | undefined>): { kind: 'dist' | 'source'; reason: string };
