import * as React from "react";

import { Input } from "./input";
import { Label } from "./label";
import { cn } from "./utils";

export type FormFieldProps = React.ComponentProps<typeof Input> & {
  label: string;
  error?: string;
};

/** A labelled input with an optional error line (the label and the message point at the input). */
export function FormField({ id, label, error, className, ...props }: FormFieldProps) {
  const generated = React.useId();
  const inputId = id ?? generated;
  const errorId = `${inputId}-error`;
  return (
    <div data-slot="form-field" className={cn("grid gap-2", className)}>
      <Label htmlFor={inputId}>{label}</Label>
      <Input id={inputId} aria-invalid={error ? true : undefined} aria-describedby={error ? errorId : undefined} {...props} />
      {error ? (
        <p id={errorId} className="text-sm text-destructive">
          {error}
        </p>
      ) : null}
    </div>
  );
}
