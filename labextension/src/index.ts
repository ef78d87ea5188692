/**
 * fuxi-notebook's frontend extension (JupyterLab 4, Notebook 7).
 *
 * 1. mirrors each `%%fuxi` session record (an output of MIME type
 *    application/vnd.fuxi.session.v1+json) into the cell's metadata `fuxi`;
 * 2. answers the kernel over the `fuxi.notebook` comm (the live notebook; what waits);
 * 3. highlights `%%fuxi` cell bodies as markdown;
 * 4. shows where cells came from (a line under an agent cell, a badge on a cell an agent
 *    inserted or edited: marks.ts);
 * 5. the Settings Editor's defaults for agent cells (settings.ts), told to each kernel;
 * 6. the `Fuxi: …` commands, in the palette and the cell context menu (commands.ts).
 * It is optional: without it the kernel reads the saved file.
 */
import type { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { IEditorLanguageRegistry } from '@jupyterlab/codemirror';
import { IConsoleTracker } from '@jupyterlab/console';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';

import { addCommands } from './commands';
import { COMM_TARGET, NotebookState } from './notebook';
import { FuxiSettings, PLUGIN_ID } from './settings';
import { warn } from './util';
import { updateAll } from './waiting';

function activate(
  app: JupyterFrontEnd,
  notebooks: INotebookTracker,
  languages: IEditorLanguageRegistry | null,
  consoles: IConsoleTracker | null,
  registry: ISettingRegistry | null,
  palette: ICommandPalette | null
): void {
  const states = new WeakMap<object, NotebookState>();
  const settings = new FuxiSettings();
  settings.onChange(() => {
    for (const state of NotebookState.open) {
      state.settingsChanged();
    }
  });
  void settings.load(registry);
  try {
    addCommands(app, notebooks, palette);
  } catch (error) {
    warn('could not add the Fuxi commands', error);
  }

  const attach = (panel: NotebookPanel): void => {
    try {
      const known = states.get(panel.context);
      if (known) {
        known.addPanel(panel);
      } else {
        states.set(panel.context, new NotebookState(app, panel, languages, settings));
      }
      panel.disposed.connect(() => {
        try {
          if (states.get(panel.context)?.removePanel(panel)) {
            states.delete(panel.context);
          }
        } catch (error) {
          warn('could not forget a closed notebook', error);
        }
      });
    } catch (error) {
      warn('could not follow a notebook', error);
    }
  };
  notebooks.forEach(attach);
  notebooks.widgetAdded.connect((_, panel) => attach(panel));

  // A kernel connection without the target closes a comm the kernel opens: a console that
  // connected to a notebook's kernel first hands the comm to that notebook.
  if (consoles) {
    consoles.widgetAdded.connect((_, panel) => {
      const register = (): void => {
        try {
          const kernel = panel.sessionContext.session?.kernel;
          kernel?.registerCommTarget(COMM_TARGET, (comm, msg) =>
            NotebookState.dispatch(null, kernel.id, comm, msg)
          );
        } catch (error) {
          warn('could not register the comm target of a console', error);
        }
      };
      panel.sessionContext.kernelChanged.connect(register);
      register();
    });
  }

  app.shell.currentChanged?.connect(() => {
    try {
      updateAll();
    } catch (error) {
      warn('could not update the waiting marks', error);
    }
  });
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: PLUGIN_ID,
  description:
    'fuxi-notebook: session records into cell metadata, the fuxi.notebook comm, ' +
    '%%fuxi cells edited as markdown.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [IEditorLanguageRegistry, IConsoleTracker, ISettingRegistry, ICommandPalette],
  activate
};

export default plugin;
