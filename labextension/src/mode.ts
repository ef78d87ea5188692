/**
 * `%%fuxi` cell bodies are prose for the agent, so their editor highlights them as
 * markdown. Only the editor model's mimeType changes: it is not saved and never makes the
 * notebook dirty. JupyterLab resets code cells' mimeType (a kernel's language arrives or
 * changes, a cell is inserted); the mimeTypeChanged handler puts markdown back.
 */
import type { ICellModel } from '@jupyterlab/cells';
import type { IEditorLanguageRegistry } from '@jupyterlab/codemirror';

import { warn } from './util';

export const MARKDOWN_MIME = 'text/x-ipythongfm';

/** Whether the source's first non-blank line is `%%fuxi` (alone or with arguments). */
export function isFuxiSource(source: string): boolean {
  for (const line of source.split('\n')) {
    if (line.trim()) {
      return /^%%fuxi(\s|$)/.test(line);
    }
  }
  return false;
}

export class FuxiMode {
  /**
   * @param codeMime the notebook's mimeType for code cells (its kernel's language)
   */
  constructor(
    private readonly codeMime: () => string,
    private readonly languages: IEditorLanguageRegistry | null
  ) {}

  /** Follow the cell: markdown while it is a `%%fuxi` cell, the notebook's language after. */
  watch(model: ICellModel): void {
    if (model.type !== 'code') {
      return;
    }
    const apply = (): void => {
      try {
        this.apply(model);
      } catch (error) {
        warn('could not set the editor mode of a %%fuxi cell', error);
      }
    };
    model.contentChanged.connect(apply);
    model.mimeTypeChanged.connect(apply);
    apply();
  }

  private wanted(model: ICellModel): string | null {
    if (isFuxiSource(model.sharedModel.getSource())) {
      return MARKDOWN_MIME;
    }
    return this.ours.has(model) ? this.codeMime() : null;
  }

  private set(model: ICellModel, mime: string): void {
    if (mime === MARKDOWN_MIME) {
      this.ours.add(model);
    } else {
      this.ours.delete(model);
    }
    if (model.mimeType !== mime) {
      model.mimeType = mime;
    }
  }

  private apply(model: ICellModel): void {
    const mime = this.wanted(model);
    if (mime === null || model.isDisposed) {
      return;
    }
    if (model.mimeType === mime || !this.languages) {
      this.set(model, mime);
      return;
    }
    // The editor loads the language of each mimeType it is given asynchronously: both are
    // loaded first, so the language JupyterLab just set cannot arrive after ours.
    Promise.all([this.languages.getLanguage(model.mimeType), this.languages.getLanguage(mime)])
      .catch(() => undefined)
      .then(() => {
        if (!model.isDisposed && this.wanted(model) === mime) {
          this.set(model, mime);
        }
      })
      .catch(error => warn('could not set the editor mode of a %%fuxi cell', error));
  }

  private readonly ours = new WeakSet<ICellModel>();
}
