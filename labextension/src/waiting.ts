/**
 * What the kernel waits for (an approval, a question, a replay or trust decision) where
 * the person cannot see it: the notebook's tab gets a dot (and the browser tab's title,
 * while the browser tab is hidden) and a notification says where, with a "Show" action.
 * The mark and the notification go when the kernel says it was answered, when the comm
 * closes or the kernel restarts; the notification also goes once the cell is seen.
 */
import { Notification } from '@jupyterlab/apputils';
import type { NotebookPanel } from '@jupyterlab/notebook';

import { warn } from './util';

export const MARK_CLASS = 'fuxi-mod-waiting';
export const TITLE_PREFIX = '\u25cf ';

const WHAT: { [kind: string]: string } = {
  approval: 'an approval',
  question: 'a question',
  replay: 'a replay confirmation',
  trust: 'a trust decision'
};

interface IWait {
  kind: string;
  origin: string;
  notification: string | null;
  notified: boolean;
}

const everyone = new Set<Waits>();

/** The browser tab's title: prefixed while it is hidden and something waits. */
function updateDocumentTitle(): void {
  const wanted = document.hidden && [...everyone].some(waits => waits.size > 0);
  const title = document.title;
  if (wanted && !title.startsWith(TITLE_PREFIX)) {
    document.title = TITLE_PREFIX + title;
  } else if (!wanted && title.startsWith(TITLE_PREFIX)) {
    document.title = title.slice(TITLE_PREFIX.length);
  }
}

export function updateAll(): void {
  for (const waits of everyone) {
    waits.update();
  }
  updateDocumentTitle();
}

document.addEventListener('visibilitychange', () => {
  try {
    updateAll();
  } catch (error) {
    warn('could not update the waiting marks', error);
  }
});

function toggleClass(panel: NotebookPanel, name: string, on: boolean): void {
  // Never the label: a DocumentWidget renames its file when its title's label changes.
  const title = panel.title;
  const parts = title.className.split(/\s+/).filter(part => part && part !== name);
  if (on) {
    parts.push(name);
  }
  const className = parts.join(' ');
  if (className !== title.className.trim()) {
    title.className = className;
  }
}

/** The waits of one notebook (all the panels that show its document). */
export class Waits {
  constructor(
    private readonly panels: () => NotebookPanel[],
    private readonly activate: (panel: NotebookPanel) => void
  ) {
    everyone.add(this);
  }

  get size(): number {
    return this.waits.size;
  }

  wait(cell: string, kind: string, origin: string): void {
    const known = this.waits.get(cell);
    if (known && known.notification !== null && known.kind === kind) {
      known.origin = origin; // the same wait, still announced
    } else {
      if (known) {
        this.dismiss(known);
      }
      // a new wait (or one seen already, waiting anew): announced if the cell is not seen
      this.waits.set(cell, { kind, origin, notification: null, notified: false });
    }
    this.update();
    updateDocumentTitle();
  }

  answered(cell: string): void {
    const known = this.waits.get(cell);
    if (known) {
      this.drop(cell, known);
    }
  }

  /** Forget every wait (of one comm, if given): it closed, or the kernel restarted. */
  clear(origin?: string): void {
    for (const [cell, known] of [...this.waits]) {
      if (origin === undefined || known.origin === origin) {
        this.drop(cell, known);
      }
    }
  }

  dispose(): void {
    this.clear();
    everyone.delete(this);
    updateDocumentTitle();
  }

  /** Recompute the marks and notifications from what is visible now. */
  update(): void {
    let hidden = false;
    for (const [cell, known] of this.waits) {
      if (this.isVisible(cell)) {
        this.dismiss(known);
      } else {
        hidden = true;
        if (!known.notified) {
          known.notified = true;
          known.notification = this.notify(cell, known.kind);
        }
      }
    }
    for (const panel of this.panels()) {
      toggleClass(panel, MARK_CLASS, hidden);
    }
  }

  /** Activate a panel of the notebook and scroll the cell into the middle of it. */
  async show(cell: string): Promise<void> {
    const panel = this.panels().find(candidate => candidate.isVisible) ?? this.panels()[0];
    if (!panel) {
      return;
    }
    this.activate(panel);
    const index = this.indexOf(panel, cell);
    if (index >= 0) {
      panel.content.activeCellIndex = index;
      await panel.content.scrollToItem(index, 'center');
    }
    this.update();
  }

  private drop(cell: string, known: IWait): void {
    this.waits.delete(cell);
    this.dismiss(known);
    this.update();
    updateDocumentTitle();
  }

  private dismiss(known: IWait): void {
    if (known.notification !== null) {
      Notification.dismiss(known.notification);
      known.notification = null;
    }
  }

  private notify(cell: string, kind: string): string {
    const panel = this.panels()[0];
    const name = panel ? panel.context.localPath.split('/').pop() : 'a notebook';
    const index = panel ? this.indexOf(panel, cell) : -1;
    const where = index >= 0 ? `, cell ${index + 1}` : '';
    const message = `fuxi: ${WHAT[kind] ?? 'an answer'} waits in ${name}${where}`;
    return Notification.warning(message, {
      autoClose: false,
      actions: [
        {
          label: 'Show',
          caption: 'Show the cell that waits',
          callback: () => {
            this.show(cell).catch(error => warn('could not show the cell', error));
          }
        }
      ]
    });
  }

  private indexOf(panel: NotebookPanel, cell: string): number {
    const cells = panel.content.model?.cells;
    for (let index = 0; cells && index < cells.length; index++) {
      if (cells.get(index).id === cell) {
        return index;
      }
    }
    return -1;
  }

  /** Whether some panel shows (part of) the cell now, in a visible browser tab. */
  private isVisible(cell: string): boolean {
    if (document.hidden) {
      return false;
    }
    return this.panels().some(panel => {
      if (!panel.isVisible) {
        return false;
      }
      const widget = panel.content.widgets[this.indexOf(panel, cell)];
      if (!widget || !widget.node.isConnected || !widget.isVisible) {
        return false;
      }
      const box = widget.node.getBoundingClientRect();
      const view = panel.content.node.getBoundingClientRect();
      return box.height > 0 && box.bottom > view.top && box.top < view.bottom;
    });
  }

  private readonly waits = new Map<string, IWait>();
}
