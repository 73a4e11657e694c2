import * as React from "react";

import { Button } from "./button";
import { cn } from "./utils";

type DialogState = { open: boolean; setOpen: (open: boolean) => void };

const DialogContext = React.createContext<DialogState | null>(null);

function useDialog(part: string): DialogState {
  const state = React.useContext(DialogContext);
  if (state === null) {
    throw new Error(`<${part}> must be inside <Dialog>`);
  }
  return state;
}

export type DialogProps = {
  open?: boolean;
  defaultOpen?: boolean;
  onOpenChange?: (open: boolean) => void;
  children?: React.ReactNode;
};

/** A modal dialog on the native <dialog> element (focus trap, Escape and the backdrop come from the browser). */
export function Dialog({ open, defaultOpen = false, onOpenChange, children }: DialogProps) {
  const [inner, setInner] = React.useState(defaultOpen);
  const isOpen = open ?? inner;
  const setOpen = React.useCallback(
    (next: boolean) => {
      if (open === undefined) {
        setInner(next);
      }
      onOpenChange?.(next);
    },
    [open, onOpenChange],
  );
  const state = React.useMemo(() => ({ open: isOpen, setOpen }), [isOpen, setOpen]);
  return <DialogContext.Provider value={state}>{children}</DialogContext.Provider>;
}

export function DialogTrigger({ onClick, ...props }: React.ComponentProps<typeof Button>) {
  const { setOpen } = useDialog("DialogTrigger");
  return (
    <Button
      data-slot="dialog-trigger"
      onClick={(event) => {
        onClick?.(event);
        setOpen(true);
      }}
      {...props}
    />
  );
}

export function DialogContent({ className, children, ...props }: React.ComponentProps<"dialog">) {
  const { open, setOpen } = useDialog("DialogContent");
  const ref = React.useRef<HTMLDialogElement>(null);
  React.useEffect(() => {
    const node = ref.current;
    if (node === null) {
      return;
    }
    if (open && !node.open) {
      node.showModal();
    } else if (!open && node.open) {
      node.close();
    }
  }, [open]);
  return (
    <dialog
      ref={ref}
      data-slot="dialog-content"
      onClose={() => setOpen(false)}
      className={cn("grid w-full max-w-lg gap-4 rounded-lg border bg-background p-6 shadow-lg", className)}
      {...props}
    >
      {open ? children : null}
    </dialog>
  );
}

export function DialogHeader({ className, ...props }: React.ComponentProps<"div">) {
  return <div data-slot="dialog-header" className={cn("flex flex-col gap-2", className)} {...props} />;
}

export function DialogFooter({ className, ...props }: React.ComponentProps<"div">) {
  return <div data-slot="dialog-footer" className={cn("flex justify-end gap-2", className)} {...props} />;
}

export function DialogTitle({ className, ...props }: React.ComponentProps<"h2">) {
  return <h2 data-slot="dialog-title" className={cn("text-lg font-semibold leading-none", className)} {...props} />;
}

export function DialogDescription({ className, ...props }: React.ComponentProps<"p">) {
  return <p data-slot="dialog-description" className={cn("text-sm text-muted-foreground", className)} {...props} />;
}

export function DialogClose({ onClick, variant = "outline", ...props }: React.ComponentProps<typeof Button>) {
  const { setOpen } = useDialog("DialogClose");
  return (
    <Button
      data-slot="dialog-close"
      variant={variant}
      onClick={(event) => {
        onClick?.(event);
        setOpen(false);
      }}
      {...props}
    />
  );
}
