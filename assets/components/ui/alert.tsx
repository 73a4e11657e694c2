import * as React from "react";

import { cn } from "./utils";

const variants = {
  default: "bg-card text-card-foreground",
  destructive: "bg-card text-destructive",
} as const;

export type AlertProps = React.ComponentProps<"div"> & { variant?: keyof typeof variants };

export function Alert({ className, variant = "default", ...props }: AlertProps) {
  return (
    <div
      data-slot="alert"
      role="alert"
      className={cn("relative grid w-full gap-1 rounded-lg border px-4 py-3 text-sm", variants[variant], className)}
      {...props}
    />
  );
}

export function AlertTitle({ className, ...props }: React.ComponentProps<"div">) {
  return <div data-slot="alert-title" className={cn("font-medium tracking-tight", className)} {...props} />;
}

export function AlertDescription({ className, ...props }: React.ComponentProps<"div">) {
  return <div data-slot="alert-description" className={cn("text-sm text-muted-foreground", className)} {...props} />;
}
