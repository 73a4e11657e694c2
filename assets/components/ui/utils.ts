import { clsx, type ClassValue } from "clsx";

/** Join class names, dropping falsy ones (`cn("a", cond && "b")`). */
export function cn(...inputs: ClassValue[]): string {
  return clsx(inputs);
}
