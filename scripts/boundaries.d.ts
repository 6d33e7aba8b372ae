export interface BoundaryRule {
  name: string;
  files: string[];
  forbidden: string[];
  why: string;
}
export declare const rules: BoundaryRule[];
export declare const boundaries: { files: string[]; rules: Record<string, unknown> }[];
