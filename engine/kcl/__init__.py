"""KCL evaluation (kcl-lib) with our `framework` KCL package as an external package.

Import `engine.kcl.evaluate` for the functions; this module stays empty so that importing the
package costs nothing.
"""
