// Library code for `flce matrix` (torch-free; links with the Python host through python_host.hpp).
namespace flce {}
