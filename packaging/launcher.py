"""Entry script of the frozen app.

PyInstaller runs its entry script as ``__main__`` outside any package, so this tiny file imports
the real entry point instead of freezing ``dpplanner/__main__.py`` directly (which would lose its
package context).
"""

import sys

from dpplanner.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
