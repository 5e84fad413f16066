"use client";

import { usePathname } from "next/navigation";
import { type ReactNode, useEffect, useState } from "react";

/**
 * The sidebar's navigation. On a narrow screen (globals.css, ≤ 800 px) it folds behind a "Menu"
 * button, so a page starts with its own content; it folds again after each navigation.
 */
export function MainMenu({ children }: { children: ReactNode }) {
  const [open, setOpen] = useState(false);
  const pathname = usePathname();
  useEffect(() => setOpen(false), [pathname]);
  return (
    <>
      <button type="button" className="menu-toggle" aria-expanded={open} aria-controls="main-menu" onClick={() => setOpen(!open)}>
        Menu
      </button>
      <nav id="main-menu" aria-label="Main" data-open={open}>
        {children}
      </nav>
    </>
  );
}
