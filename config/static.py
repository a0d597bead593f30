"""Static files through WhiteNoise without leaving the event loop.

`whitenoise.middleware.WhiteNoiseMiddleware` is sync-only, so under the ASGI server Django
wraps it: every request, static or not, hopped to a worker thread for it and back to the
loop for the next middleware, then to a thread again for the view.  This subclass declares
itself async-capable: the lookup is a dict access (or a file-system check with autorefresh),
and a hit is served as WhiteNoise serves it.
"""

from __future__ import annotations

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from whitenoise.middleware import WhiteNoiseMiddleware


class AsyncWhiteNoiseMiddleware(WhiteNoiseMiddleware):
    sync_capable = True
    async_capable = True

    def __init__(self, get_response=None, settings=None):
        kwargs = {} if settings is None else {"settings": settings}
        super().__init__(get_response, **kwargs)
        self._async = iscoroutinefunction(get_response)
        if self._async:
            markcoroutinefunction(self)

    def __call__(self, request):
        if self._async:
            return self.__acall__(request)
        return super().__call__(request)

    async def __acall__(self, request):
        if self.autorefresh:  # development only: looks at the disk
            static_file = await sync_to_async(self.find_file)(request.path_info)
        else:
            static_file = self.files.get(request.path_info)
        if static_file is not None:
            return self.serve(static_file, request)
        return await self.get_response(request)
