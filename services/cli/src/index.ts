// weft's CLI is a program (main.ts): no package imports it.
export {};
