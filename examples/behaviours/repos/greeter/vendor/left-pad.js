export const leftPad = (s, n) => String(s).padStart(n);
