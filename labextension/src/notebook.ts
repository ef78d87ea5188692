/**
 * One open notebook: its cells followed (record mirrored into metadata, %%fuxi editor
 * mode, which cells run) and the `fuxi.notebook` comm its kernel opens answered.
 */
import type { JupyterFrontEnd } from '@jupyterlab/application';
import type { ICellModel, ICodeCellModel } from '@jupyterlab/cells';
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import type { NotebookPanel } from '@jupyterlab/notebook';
import type { Kernel, KernelMessage } from '@jupyterlab/services';

import { applyChange } from './changes';
import { drawMark } from './draw';
import { cellMarks, markedFuxi } from './marks';
import { FuxiMode } from './mode';
import { outputSummaries } from './outputs';
import { hasRecordOutput, mirrorRecord, rememberRecord } from './record';
import type { FuxiSettings } from './settings';
import { guarded, isObject, JSONObject, METADATA_KEY, pathMatch, warn } from './util';
import { Waits } from './waiting';

export const COMM_TARGET = 'fuxi.notebook';
/** The comm's id, one per kernel (the kernel's live_notebook.py): a tab opened on a kernel
 * that opened the comm before (a reloaded tab) attaches to it and says hello again. */
export const COMM_ID = 'fuxi.notebook.comm';
export const PROTOCOL_VERSION = 1;

const RESTARTING = new Set(['restarting', 'autorestarting', 'dead', 'terminating']);

/** Sends on a comm, never throwing (the kernel may be gone). */
export function send(comm: Kernel.IComm, data: JSONObject): void {
  try {
    const future = comm.send(data as never);
    future?.done?.catch(() => undefined);
  } catch (error) {
    warn('could not answer the kernel', error);
  }
}

export class NotebookState {
  constructor(
    private readonly app: JupyterFrontEnd,
    panel: NotebookPanel,
    languages: IEditorLanguageRegistry | null,
    private readonly settings: FuxiSettings
  ) {
    this.panels = [panel];
    this.context = panel.context;
    NotebookState.open.add(this);
    this.mode = new FuxiMode(
      () => this.primary()?.content.codeMimetype ?? 'text/x-ipython',
      languages
    );
    this.waits = new Waits(
      () => this.panels,
      target => this.app.shell.activateById(target.id)
    );
    const session = panel.sessionContext;
    session.kernelChanged.connect(
      guarded('could not follow the kernel change', () => {
        this.waits.clear();
        this.register();
      })
    );
    session.statusChanged.connect(
      guarded('could not follow the kernel status', (_, status: string) => {
        if (RESTARTING.has(status)) {
          this.waits.clear();
          this.register();
        }
      })
    );
    this.register();
    this.context.ready
      .then(() => this.followCells())
      .catch(error => warn('could not follow the notebook', error));
  }

  /** Another view of the same document. */
  addPanel(panel: NotebookPanel): void {
    this.panels.push(panel);
    this.followScroll(panel);
    this.redrawSoon();
  }

  /** The state of the notebook `panel` shows, if it is followed. */
  static of(panel: NotebookPanel): NotebookState | null {
    return [...NotebookState.open].find(state => state.panels.includes(panel)) ?? null;
  }

  /**
   * The next run of agent cell `cellId` is a replay of its record ("Fuxi: replay this
   * cell"): the kernel reads it in the live document it asks for as the cell starts, once.
   */
  requestReplay(cellId: string): void {
    this.replayAsked.add(cellId);
  }

  /** The Settings Editor's defaults changed: the kernel hears of it. */
  settingsChanged(): void {
    if (this.comm && !this.comm.isDisposed) {
      send(this.comm, { event: 'settings', settings: this.settings.values });
    }
  }

  /** Draw the cells' marks (marks.ts) once the current changes are made. */
  private redrawSoon(): void {
    if (this.redrawQueued) {
      return;
    }
    this.redrawQueued = true;
    queueMicrotask(() => {
      this.redrawQueued = false;
      try {
        this.redraw();
      } catch (error) {
        warn('could not mark the cells', error);
      }
    });
  }

  private redraw(): void {
    const cells = this.context.model.cells;
    const views = [];
    for (let index = 0; index < cells.length; index++) {
      const cell = cells.get(index);
      views.push({
        id: cell.id,
        cell_type: cell.type,
        source: () => cell.sharedModel.getSource(),
        fuxi: this.marked.get(cell)
      });
    }
    const marks = cellMarks(views);
    for (const panel of this.panels) {
      for (const widget of panel.content.widgets) {
        drawMark(widget, marks.get(widget.model.id) ?? null);
      }
    }
  }

  /** A view closed; true when none is left. */
  removePanel(panel: NotebookPanel): boolean {
    this.panels = this.panels.filter(candidate => candidate !== panel);
    if (this.panels.length === 0) {
      NotebookState.open.delete(this);
      this.waits.dispose();
      return true;
    }
    this.waits.update();
    return false;
  }

  get path(): string {
    return this.context.localPath || this.context.path;
  }

  private primary(): NotebookPanel | undefined {
    return this.panels[0];
  }

  private followCells(): void {
    const model = this.context.model;
    const cells = model.cells;
    for (let index = 0; index < cells.length; index++) {
      this.followCell(cells.get(index));
    }
    cells.changed.connect(
      guarded('could not follow a new cell', (_, change) => {
        if (change.type === 'add' || change.type === 'set') {
          for (const cell of change.newValues) {
            this.followCell(cell);
          }
        }
        this.waits.update();
        this.redrawSoon();
      })
    );
    for (const panel of this.panels) {
      this.followScroll(panel);
    }
    this.redrawSoon();
  }

  private followCell(model: ICellModel): void {
    if (this.followed.has(model)) {
      return;
    }
    this.followed.add(model);
    this.mode.watch(model);
    this.marked.set(model, markedFuxi(model.getMetadata(METADATA_KEY)));
    model.metadataChanged.connect(
      guarded('could not follow a cell\'s metadata', (_, change) => {
        if (change.key === METADATA_KEY) {
          this.marked.set(model, markedFuxi(model.getMetadata(METADATA_KEY)));
          this.redrawSoon();
        }
      })
    );
    if (model.type !== 'code') {
      return;
    }
    const code = model as ICodeCellModel;
    rememberRecord(model);
    code.outputs.changed.connect(
      guarded('could not mirror a session record', () => mirrorRecord(model))
    );
    code.stateChanged.connect(
      guarded('could not follow a cell execution', (_, change) => {
        if (change.name !== 'executionState') {
          return;
        }
        this.scheduled = this.scheduled.filter(id => id !== model.id);
        if (code.executionState === 'running') {
          this.scheduled.push(model.id);
        }
      })
    );
  }

  private followScroll(panel: NotebookPanel): void {
    if (this.scrolling.has(panel)) {
      return;
    }
    this.scrolling.add(panel);
    let queued = false;
    const onScroll = (): void => {
      if (queued || this.waits.size === 0) {
        return;
      }
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        try {
          this.waits.update();
        } catch (error) {
          warn('could not update the waiting marks', error);
        }
      });
    };
    // captured: the element that scrolls is inside the notebook's node (JupyterLab's
    // windowed notebook), and scroll events do not bubble
    panel.content.node.addEventListener('scroll', onScroll, { passive: true, capture: true });
    panel.disposed.connect(() =>
      panel.content.node.removeEventListener('scroll', onScroll, { capture: true })
    );
  }

  /** The id of the kernel this notebook is connected to, if any. */
  get kernelId(): string | null {
    return this.primary()?.sessionContext.session?.kernel?.id ?? null;
  }

  /**
   * A `fuxi.notebook` comm opened by a kernel, as the kernel connection that handles comms
   * received it. In one page only the first connection to a kernel handles comms (the
   * others, of further notebooks or consoles on that kernel, never see them), so the
   * notebook the kernel names answers here, whichever connection received it: the open
   * notebook on that kernel whose path matches best (none: no answer, and the comm stays
   * open for another page), or with no path given the receiver.
   */
  static dispatch(
    receiver: NotebookState | null,
    kernelId: string,
    comm: Kernel.IComm,
    msg: KernelMessage.ICommOpenMsg
  ): void {
    try {
      const data = msg.content.data;
      const asked = isObject(data) && typeof data.path === 'string' ? data.path : null;
      const onKernel = [...NotebookState.open].filter(state => state.kernelId === kernelId);
      let chosen: NotebookState | null = null;
      if (asked === null) {
        chosen = receiver ?? onKernel[0] ?? null;
      } else {
        let best = 0;
        for (const state of onKernel) {
          const match = pathMatch(asked, state.path);
          if (match > best) {
            best = match;
            chosen = state;
          }
        }
      }
      chosen?.answer(comm);
    } catch (error) {
      warn('could not open the fuxi.notebook comm', error);
    }
  }

  /** (Again) the comm target on the kernel connection: after a restart or a new kernel. */
  private register(): void {
    const kernel = this.primary()?.sessionContext.session?.kernel;
    if (kernel && !kernel.isDisposed) {
      kernel.registerCommTarget(COMM_TARGET, (comm, msg) =>
        NotebookState.dispatch(this, kernel.id, comm, msg)
      );
      this.attach(kernel);
    }
  }

  /**
   * Attach to the comm the kernel may have opened before this page connected (a reloaded
   * tab: the kernel runs on, maybe a cell waiting for a card): hello on it again, so the
   * kernel answers this page from now on and gives it what a running cell shows. A kernel
   * without the comm ignores the hello; when it opens the comm later, the target above
   * answers it as usual.
   */
  private attach(kernel: Kernel.IKernelConnection): void {
    try {
      if (!kernel.handleComms || kernel.hasComm(COMM_ID)) {
        return; // another connection of this page, or another notebook, answers it
      }
      this.answer(kernel.createComm(COMM_TARGET, COMM_ID));
    } catch (error) {
      warn('could not attach to the kernel', error);
    }
  }

  /** This notebook answers the comm: hello now, then the kernel's requests and events. */
  private answer(comm: Kernel.IComm): void {
    comm.onMsg = (message: KernelMessage.ICommMsgMsg) => {
      try {
        this.received(comm, message.content.data);
      } catch (error) {
        warn('could not handle a message from the kernel', error);
      }
    };
    comm.onClose = () => {
      try {
        this.waits.clear(comm.commId);
      } catch (error) {
        warn('could not handle the comm closing', error);
      }
    };
    this.comm = comm;
    const app = this.app.name.toLowerCase().includes('notebook') ? 'Notebook' : 'JupyterLab';
    send(comm, {
      event: 'hello',
      version: PROTOCOL_VERSION,
      app,
      app_version: this.app.version,
      path: this.path,
      edits: 1,
      settings: this.settings.values
    });
  }

  private received(comm: Kernel.IComm, data: unknown): void {
    if (!isObject(data)) {
      return;
    }
    if (data.request === 'notebook') {
      if (typeof data.id === 'number' && Number.isInteger(data.id)) {
        send(comm, { id: data.id, notebook: this.snapshot() });
      }
    } else if (data.request === 'outputs') {
      // what the cells an agent cell is about show (summaries: no images, no HTML)
      if (typeof data.id === 'number' && Number.isInteger(data.id)) {
        send(comm, { id: data.id, outputs: outputSummaries(this.context.model, data.cells) });
      }
    } else if (typeof data.request === 'string') {
      // the cell tools and `%fuxi undo` (a request this version does not know is answered
      // with an error, not left to time out); id 0: nobody waits for the answer
      const result = applyChange(this.context.model, data);
      if (typeof data.id === 'number' && Number.isInteger(data.id) && data.id > 0) {
        send(comm, { id: data.id, result });
      }
    } else if (data.event === 'waiting') {
      if (typeof data.cell === 'string' && typeof data.kind === 'string') {
        this.waits.wait(data.cell, data.kind, comm.commId);
      }
    } else if (data.event === 'answered') {
      if (typeof data.cell === 'string') {
        this.waits.answered(data.cell);
      }
    }
    // anything else: a newer kernel's message, ignored
  }

  /** The live document: unsaved sources, current order, what runs. */
  private snapshot(): JSONObject {
    const model = this.context.model;
    const cells: JSONObject[] = [];
    const running: string[] = [];
    for (let index = 0; index < model.cells.length; index++) {
      const cell = model.cells.get(index);
      const fuxi = cell.getMetadata(METADATA_KEY);
      cells.push({
        id: cell.id,
        cell_type: cell.type,
        source: cell.sharedModel.getSource(),
        fuxi: fuxi === undefined ? null : fuxi,
        has_record_output: hasRecordOutput(cell)
      });
      if (cell.type === 'code' && (cell as ICodeCellModel).executionState === 'running') {
        running.push(cell.id);
      }
    }
    // in the order they were scheduled (the kernel runs them in that order)
    const order = this.scheduled.filter(id => running.includes(id));
    const replay = [...this.replayAsked].filter(id => running.includes(id));
    for (const id of replay) {
      this.replayAsked.delete(id); // once: the next run of the cell is as usual
    }
    return {
      path: this.path,
      dirty: model.dirty,
      running: [...order, ...running.filter(id => !order.includes(id))],
      replay,
      cells
    };
  }

  /** Every notebook open in this page. */
  static readonly open = new Set<NotebookState>();

  readonly waits: Waits;
  private panels: NotebookPanel[];
  private readonly context: NotebookPanel['context'];
  private readonly mode: FuxiMode;
  private readonly followed = new WeakSet<ICellModel>();
  private readonly scrolling = new WeakSet<NotebookPanel>();
  private scheduled: string[] = [];
  /** The comm this notebook answers (the settings go on it when they change). */
  private comm: Kernel.IComm | null = null;
  private redrawQueued = false;
  /** What the marks read of each cell's `metadata.fuxi` (marks.ts `markedFuxi`). */
  private readonly marked = new WeakMap<ICellModel, unknown>();
  /** Agent cells whose next run is a replay (`requestReplay`). */
  private readonly replayAsked = new Set<string>();
}

