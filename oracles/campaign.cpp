// Library code for `flce campaign` (torch-free; links with the Python host through python_host.hpp).
namespace flce {}
